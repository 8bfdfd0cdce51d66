# Two commands: `make run` and `make test`. Each sets up everything it needs first.
# `make run` installs only what running needs; `make test` adds the test extras. Each has its
# own stamp, so a venv made by `make run` never passes for one that can run the tests.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
RUN_STAMP  := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run reset test lint typecheck pytest install clean chromium eval

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python 3.11 or newer is needed (found: $$($(PYTHON) --version))"; exit 1; }
	@echo "setting up $(VENV) (first time only)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $(RUN_STAMP)

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(RUN_STAMP) $(TEST_STAMP)

install: $(TEST_STAMP)

run: $(RUN_STAMP)
	$(BIN)/supportagent ui --demo

# Back to the demo as shipped: every ticket new again, no reviews, an empty audit log.
reset: $(RUN_STAMP)
	$(BIN)/supportagent reset-demo --yes

# Every eval on the demo data and on each set in eval/, ../shared/eval and $$SUPPORTAGENT_EVAL_DATA
# that exists (a missing one is skipped with a line), offline, then the report under reports/.
# A score never fails it; a crash does. Big sets are sampled: EVAL_LIMIT rows each, and the
# first EVAL_INJECTION_SAMPLE attacks of each injection set (0: all).
EVAL_LIMIT ?= 200
EVAL_INJECTION_SAMPLE ?= 5

eval: $(RUN_STAMP)
	$(BIN)/python -m supportagent.evals.suite --out reports --limit $(EVAL_LIMIT) \
		--injection-sample $(EVAL_INJECTION_SAMPLE)

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

# The browser tests drive Debian's chromium: install it with apt when it is missing. If that
# cannot be done here, the browser tests skip (and fail under CI=true) with the reason.
CHROMIUM := /usr/bin/chromium

chromium:
	@test -x $(CHROMIUM) || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing chromium for the browser tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
				|| echo "could not install chromium: the browser tests will not run"; \
		else \
			echo "chromium is missing: run 'sudo apt-get install chromium' for the browser tests"; \
		fi; }

pytest: $(TEST_STAMP) chromium
	$(BIN)/pytest

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
