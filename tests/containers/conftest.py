"""Containers built and run by the tests: podman (Debian's package) through the wrapper ``PODMAN_HERE`` names.

Skipped, with the reason, where podman or the tool is missing, or where neither root nor sudo can run it.
Every container, pod and volume a test creates is removed by its fixture's finalizer, also when the test fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from plugin.labelstudio import localserver

ROOT = Path(__file__).resolve().parents[2]
# CI runs in a fresh clone with shared/ beside the repository; elsewhere $PODMAN_HERE names the tool.
PODMAN_HERE = Path(os.environ.get("PODMAN_HERE") or ROOT.parent / "shared" / "tools" / "podman-here")
LABEL_STUDIO_VERSION = re.search(r"^LABEL_STUDIO_VERSION := (\S+)$", (ROOT / "Makefile").read_text(),
                                 re.MULTILINE).group(1)
IMAGE = "localhost/label-studio-agreement:test"
LABEL_STUDIO_BIN = os.environ.get("LABEL_STUDIO_BIN")
SECRET = "container-secret-0123456789"


def _why_not() -> str | None:
    if not PODMAN_HERE.exists():
        return f"no {PODMAN_HERE} (the container tool of these machines; or set PODMAN_HERE)"
    if shutil.which("podman") is None:
        return "podman is not installed (`make test` installs it with apt, as root or through sudo)"
    if os.geteuid() != 0 and subprocess.run(["sudo", "-n", "true"], capture_output=True, check=False).returncode != 0:
        return "podman-here needs root, and sudo asks for a password"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _why_not()
    if reason:
        here = Path(__file__).parent
        for item in items:
            if here in Path(item.fspath).parents:
                item.add_marker(pytest.mark.skip(reason=reason))


_SECRET_NAME = re.compile(r"^([A-Z_]*(?:KEY|SECRET|PASSWORD|TOKEN)[A-Z_]*)=.*$")


def shown(args: tuple[str, ...]) -> str:
    """The arguments as an error may print them: the values of ``--env`` secrets replaced by ``***``.

    >>> shown(("run", "--env", "LABEL_STUDIO_API_KEY=abc", "--env", "LABEL_STUDIO_URL=http://x"))
    'run --env LABEL_STUDIO_API_KEY=*** --env LABEL_STUDIO_URL=http://x'
    """
    return " ".join(_SECRET_NAME.sub(r"\1=***", arg) for arg in args)


def podman_here(*args: str, check: bool = True, timeout: float = 900, env: dict | None = None,
                cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``podman-here ARGS``; its output is in the error when it fails."""
    done = subprocess.run([str(PODMAN_HERE), *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False,
                          env={**os.environ, **(env or {})})
    if check and done.returncode != 0:
        raise AssertionError(f"podman-here {shown(args)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n"
                             f"{done.stderr[-3000:]}")
    return done


def podman(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Plain ``podman ARGS`` (through sudo unless root), for inspecting and removing."""
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    done = subprocess.run([*sudo, "podman", *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"podman {shown(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done


def image_exists(name: str) -> bool:
    return podman("image", "exists", name, check=False).returncode == 0


@pytest.fixture(scope="session")
def agreement_image(request):
    """The service's image, built from docker/Dockerfile in docker format (so HEALTHCHECK is kept)."""
    started = time.monotonic()
    podman_here("build", "--format", "docker", "-f", "docker/Dockerfile", "-t", IMAGE, ".")
    request.config.stash[BUILD_SECONDS] = time.monotonic() - started
    return IMAGE


BUILD_SECONDS = pytest.StashKey[float]()


# label_studio_template, the session's migrated data dir, is tests/conftest.py's: the integration tier's too.
@pytest.fixture
def label_studio(label_studio_template, tmp_path_factory):
    server = localserver.start_copy(label_studio_template, tmp_path_factory.mktemp("label-studio") / "server",
                                    command=LABEL_STUDIO_BIN)
    yield server
    server.stop()


def wait_for(predicate, timeout: float, what: str, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
