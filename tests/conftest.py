"""Shared test settings: Hypothesis profiles sized for each tier on CI's two cores (tests/profiles.py), and the
guard against stray processes.
"""

import os
import time
from pathlib import Path

import pytest

from tests import profiles
from tests.processes import descendants

# HYPOTHESIS_PROFILE: fast (make test-fast), thorough (make test), dev (otherwise); derandomized where CI is set.
profiles.register()

# Scripts that record test data from a running Label Studio or a peer package; run by hand, never collected.
collect_ignore_glob = ["data/*.py"]


# --- Tiers (markers registered in pyproject.toml) -----------------------------------------------------------------
# Every test under these folders gets the folder's marker, so a module added there needs none of its own. `make
# test-fast` runs the unit tier: -m "not integration and not containers and not slow". Doctests (of a conftest's
# helpers) stay in the unit tier: they need no server.
HERE = Path(__file__).resolve().parent
TIERS = {HERE / "integration": pytest.mark.integration, HERE / "containers": pytest.mark.containers}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if isinstance(item, pytest.Function):
            for folder, marker in TIERS.items():
                if folder in item.path.resolve().parents:
                    item.add_marker(marker)


# --- Label Studio's migrated data dir, for the integration and the container tiers ---------------------------------
# The test session is an entry point: it reads where `make test` installed Label Studio.
LABEL_STUDIO_BIN = os.environ.get("LABEL_STUDIO_BIN")


@pytest.fixture(scope="session")
def label_studio_template(tmp_path_factory):
    """A data dir with a migrated database and the admin user, made once a session; each server starts on a copy."""
    from plugin.labelstudio import localserver

    return localserver.migrated_template(tmp_path_factory.mktemp("label-studio-template"), command=LABEL_STUDIO_BIN)


# --- No process outlives its test ---------------------------------------------------------------------------------
# A process a test starts must be gone when the test (and its function-scoped fixtures) end, unless a longer-lived
# fixture owns it: such fixtures, and tests that restart a fixture's process, say so with ``keep_process(pid)``.
# At the end of the session no process the run started may be left at all.

_OWNED = pytest.StashKey[set]()
# Seconds for a process told to stop to go; tests/test_process_guard.py runs a session of its own with less.
_GRACE = float(os.environ.get("TESTS_PROCESS_GRACE", "5"))


def _still_alive(pids, grace=_GRACE):
    deadline = time.monotonic() + grace
    while True:
        alive = {pid: command for pid, command in descendants().items() if pid in pids}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


@pytest.fixture
def keep_process(request):
    """Mark a process as owned by a module- or session-scoped fixture, which stops it."""
    return request.config.stash.setdefault(_OWNED, set()).add


@pytest.fixture(autouse=True)
def no_process_outlives_its_test(request):
    before = set(descendants())
    yield
    owned = request.config.stash.setdefault(_OWNED, set())
    new = set(descendants()) - before - owned
    left = _still_alive(new) if new else {}  # the one look at /proc of most tests
    if left:
        pytest.fail("processes outlived the test: " + "; ".join(f"{pid} {cmd[:120]}" for pid, cmd in left.items()))


@pytest.fixture(scope="session", autouse=True)
def no_process_outlives_the_session():
    yield
    left = _still_alive(set(descendants()))
    if left:
        pytest.fail("processes outlived the test session: "
                    + "; ".join(f"{pid} {cmd[:120]}" for pid, cmd in left.items()))
