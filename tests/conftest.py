"""Shared fixtures, and the network guard: any connection beyond loopback fails the run."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from store_checks import temporary_database
from supportagent.config import Settings, load_settings
from supportagent.store.store import Store

_BLOCKED: list[str] = []
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if host in {"localhost", ""}:
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False  # a host name: resolving it already meant leaving the machine


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
        _BLOCKED.append(repr(address))
        raise ConnectionRefusedError(f"tests may not reach the network: {address!r}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _BLOCKED:
        print(f"\nNETWORK GUARD: blocked attempts to reach {sorted(set(_BLOCKED))}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _hermetic_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's settings, keys or data directory."""
    for name in (
        "DEEPSEEK_API_KEY",
        "OPENAI_API_KEY",
        "SUPPORTAGENT_LLM_API_KEY",
        "SUPPORTAGENT_DATABASE_URL",
        "SUPPORTAGENT_ENGINE",
        "SUPPORTAGENT_TOKEN",
        "SUPPORTAGENT_AUDIT_KEY",
        "SUPPORTAGENT_AUDIT_HEAD_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SUPPORTAGENT_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)  # so that no stray .env is read


@pytest.fixture
def unwritable_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The user cache folder (``XDG_CACHE_HOME``) made a file, so nothing can be kept there."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    return blocker


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(home=tmp_path / "home")


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    from supportagent.runtime import open_store

    s = open_store(settings)
    yield s
    s.close()


PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def _pg_admin() -> Any:
    """An AUTOCOMMIT engine on the server, or a skip (a failure under CI=true) without one."""
    import os

    import sqlalchemy as sa

    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is not reachable at 127.0.0.1:5432 under CI: {exc}")
        pytest.skip("PostgreSQL is not reachable at 127.0.0.1:5432 (trust auth expected)")
    return admin


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for one test, dropped afterwards.

    Skips when no server answers at 127.0.0.1:5432, except under CI=true, where a missing server
    is a failure: CI must exercise PostgreSQL.
    """
    admin = _pg_admin()
    try:
        with temporary_database(admin, "supportagent_test") as url:
            yield url
    finally:
        admin.dispose()


@pytest.fixture(scope="module")
def pg_module_url() -> Iterator[str]:
    """One PostgreSQL database for a whole test module (tests empty it themselves), dropped
    afterwards; skips like ``pg_url``."""
    admin = _pg_admin()
    try:
        with temporary_database(admin, "supportagent_module") as url:
            yield url
    finally:
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The same Store API over SQLite and over PostgreSQL."""
    url = (
        f"sqlite:///{tmp_path / 'any.db'}"
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    s = Store(url)
    s.migrate()
    yield s
    s.close()


@pytest.fixture
def llm_stub() -> Iterator[Any]:
    """A local OpenAI-compatible server on 127.0.0.1 with scripted replies (tests/llm_stub.py)."""
    from llm_stub import StubLLM

    with StubLLM() as stub:
        yield stub


# --- web app (tests/test_web*.py, test_browser.py, test_schema_fuzz.py) ------------------------


@pytest.fixture(scope="session")
def staged_demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file with the demo corpus and the whole demo inbox staged, built once per run."""
    from supportagent.runtime import build_engine, build_pipeline, load_demo
    from supportagent.scheduler import run_inbox

    home = tmp_path_factory.mktemp("staged-demo")
    built = Settings(home=home, engine="offline", _env_file=None)
    s = Store(f"sqlite:///{home / 'supportagent.db'}")
    s.migrate()
    load_demo(s)
    run_inbox(build_pipeline(built, s, build_engine(built)))
    s.close()
    return home / "supportagent.db"


@pytest.fixture
def demo_store(settings: Settings, staged_demo_db: Path) -> Iterator[Store]:
    """A private copy of the staged demo store, at the ``settings`` home."""
    import shutil

    from supportagent.runtime import open_store

    settings.home.mkdir(parents=True, exist_ok=True)
    shutil.copy(staged_demo_db, settings.home / "supportagent.db")
    s = open_store(settings)
    yield s
    s.close()
