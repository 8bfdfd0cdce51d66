# Two commands: `make run` and `make test`. Each sets up everything it needs first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck pytest install clean chromium

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python 3.11 or newer is needed (found: $$($(PYTHON) --version))"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/supportagent ui --demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
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

pytest: $(STAMP) chromium
	$(BIN)/pytest

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
