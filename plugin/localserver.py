"""A local Label Studio for the demo, the tests and the benchmarks: SQLite, loopback, its own data dir.

The first start on an empty data dir migrates the database (about 30 s); a
restart, or a start on a copy of a migrated dir, takes a few seconds. So a
test session migrates once into a template and every server gets a copy.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "admin12345"
ADMIN_TOKEN = "0123456789abcdef0123456789abcdef01234567"


def label_studio_command(explicit: str | None = None) -> str:
    """The ``label-studio`` executable: ``explicit``, next to this Python, or on PATH."""
    candidates = [explicit, str(Path(sys.prefix) / "bin" / "label-studio"), shutil.which("label-studio")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    raise RuntimeError("Label Studio is not installed: `make test` and `make demo` install it into .venv-ls; "
                       "elsewhere, name the label-studio command.")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LabelStudioServer:
    """One running Label Studio process."""

    url: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    token: str = ADMIN_TOKEN

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def start(data_dir: Path, *, port: int | None = None, timeout: float = 180.0, command: str | None = None,
          host: str = "127.0.0.1") -> LabelStudioServer:
    """Start Label Studio on ``data_dir`` (created or reused) and wait until ``/health`` answers."""
    port = port or free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("USERNAME", "PASSWORD", "PORT", "HOST")}
    env.update(HOME=str(data_dir), LABEL_STUDIO_BASE_DATA_DIR=str(data_dir / "data"), LATEST_VERSION_CHECK="false",
               SSRF_PROTECTION_ENABLED="false", DJANGO_DEBUG="false", LOG_LEVEL="WARNING")
    argv = [label_studio_command(command), "start", "--no-browser", "--internal-host", host, "--port", str(port),
               "--username", ADMIN_EMAIL, "--password", ADMIN_PASSWORD, "--user-token", ADMIN_TOKEN,
               "--enable-legacy-api-token"]
    log = open(data_dir / "label-studio.log", "ab")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = LabelStudioServer(url=f"http://127.0.0.1:{port}", data_dir=data_dir, process=process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"Label Studio exited with status {process.returncode}; see {data_dir}/label-studio.log")
        try:
            if requests.get(f"{server.url}/health", timeout=2).status_code == 200:
                return server
        except requests.RequestException:
            pass
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"Label Studio did not answer /health within {timeout:.0f} s; see {data_dir}/label-studio.log")


def migrated_template(directory: Path, *, command: str | None = None) -> Path:
    """A data dir with a migrated database and the admin user, made once."""
    if not (directory / "data").exists():
        start(directory, command=command).stop()
    return directory


def start_copy(template: Path, target: Path, *, command: str | None = None) -> LabelStudioServer:
    """Start Label Studio on a copy of ``template``."""
    shutil.copytree(template, target)
    (target / "label-studio.log").unlink(missing_ok=True)
    return start(target, command=command)


def _form(session: requests.Session, url: str, page: str, email: str, password: str) -> int:
    session.get(f"{url}{page}", timeout=10)
    answer = session.post(f"{url}{page}", timeout=10, allow_redirects=False,
                          data={"email": email, "password": password,
                                "csrfmiddlewaretoken": (session.cookies.get("csrftoken") or "")},
                          headers={"Referer": f"{url}{page}"})
    return answer.status_code


def sign_up(url: str, email: str, password: str = "annotator-pass-1") -> tuple[int, str]:
    """Create a user through the sign-up form (or log in, if they exist); return their id and legacy token."""
    session = requests.Session()
    if _form(session, url, "/user/signup/", email, password) != 302 and \
            _form(session, url, "/user/login/", email, password) != 302:
        raise RuntimeError(f"Sign-up of {email} failed, and so did logging in.")
    me = session.get(f"{url}/api/current-user/whoami", timeout=10).json()
    token = session.get(f"{url}/api/current-user/token", timeout=10).json()["token"]
    return int(me["id"]), token


def personal_access_token(url: str, email: str = ADMIN_EMAIL, password: str = ADMIN_PASSWORD) -> str:
    """Log in through the form and create a personal access token (a JWT refresh token)."""
    session = requests.Session()
    _form(session, url, "/user/login/", email, password)
    answer = session.post(f"{url}/api/token/", timeout=10,
                          headers={"X-CSRFToken": (session.cookies.get("csrftoken") or ""), "Referer": f"{url}/"})
    answer.raise_for_status()
    return str(answer.json()["token"])
