"""A local Label Studio for the demo, the tests and the benchmarks: SQLite, loopback, its own data dir.

The first start on an empty data dir migrates the database (about 30 s); a
restart, or a start on a copy of a migrated dir, takes a few seconds. So a
test session migrates once into a template and every server gets a copy.

:func:`start_production` runs it as production does instead: on a throwaway
PostgreSQL cluster, served by uwsgi with several workers (Label Studio's own
``deploy/uwsgi.ini`` settings, with ``http-keepalive``).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def stop_process(process: subprocess.Popen[Any]) -> None:
    """Stop ``process`` if it runs: SIGTERM, 20 s to end, then SIGKILL; it is reaped either way."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass
class LabelStudioServer:
    """One running Label Studio process (and, in production shape, the PostgreSQL cluster it uses)."""

    url: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    token: str = ADMIN_TOKEN
    database: PostgresCluster | None = None

    def stop(self) -> None:
        try:
            _stop_group(self.process)
        finally:
            if self.database is not None:
                self.database.stop()


def _server_env(data_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("USERNAME", "PASSWORD", "PORT", "HOST")}
    env.update(HOME=str(data_dir), LABEL_STUDIO_BASE_DATA_DIR=str(data_dir / "data"), LATEST_VERSION_CHECK="false",
               SSRF_PROTECTION_ENABLED="false", DJANGO_DEBUG="false", LOG_LEVEL="WARNING", **(extra or {}))
    return env


def start(data_dir: Path, *, port: int | None = None, timeout: float = 180.0, command: str | None = None,
          host: str = "127.0.0.1", env: dict[str, str] | None = None) -> LabelStudioServer:
    """Start Label Studio on ``data_dir`` (created or reused) and wait until ``/health`` answers.

    ``env`` adds to the server's environment (a database, for one).
    """
    port = port or free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    argv = [label_studio_command(command), "start", "--no-browser", "--internal-host", host, "--port", str(port),
               "--username", ADMIN_EMAIL, "--password", ADMIN_PASSWORD, "--user-token", ADMIN_TOKEN,
               "--enable-legacy-api-token"]
    log = open(data_dir / "label-studio.log", "ab")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(argv, env=_server_env(data_dir, env), stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    server = LabelStudioServer(url=f"http://127.0.0.1:{port}", data_dir=data_dir, process=process)
    return _wait_healthy(server, timeout)


@contextmanager
def throwaway(prefix: str, *, production: bool = False, command: str | None = None) -> Iterator[LabelStudioServer]:
    """A Label Studio of its own for one run (a benchmark's).

    It is started in a new temporary folder as :func:`start` starts it (with ``production``, as
    :func:`start_production` does), and stopped and the folder removed on leaving.

    ``command`` is the ``label-studio`` executable (:func:`label_studio_command`).
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as directory:
        starter = start_production if production else start
        server = starter(Path(directory) / "server", command=command)
        try:
            yield server
        finally:
            server.stop()


def _wait_healthy(server: LabelStudioServer, timeout: float) -> LabelStudioServer:
    process, data_dir = server.process, server.data_dir
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            server.stop()  # its database, if it has one
            raise RuntimeError(f"Label Studio exited with status {process.returncode}; see the logs in {data_dir}.")
        try:
            if requests.get(f"{server.url}/health", timeout=2).status_code == 200:
                return server
        except requests.RequestException:
            pass
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"Label Studio did not answer /health within {timeout:.0f} s; see the logs in {data_dir}.")


POSTGRES_BIN = Path(os.environ.get("POSTGRES_BIN", "/usr/lib/postgresql/15/bin"))
"""Where PostgreSQL's server programs are (Debian's package; ``POSTGRES_BIN`` names another place)."""


@dataclass
class PostgresCluster:
    """A throwaway PostgreSQL cluster on loopback, trusting local connections, removed on :meth:`stop`."""

    directory: Path
    port: int
    user: str

    @property
    def env(self) -> dict[str, str]:
        """What Label Studio needs to use it."""
        return {"DJANGO_DB": "default", "POSTGRE_NAME": "labelstudio", "POSTGRE_USER": "labelstudio",
                "POSTGRE_PASSWORD": "", "POSTGRE_HOST": "127.0.0.1", "POSTGRE_PORT": str(self.port)}

    def _run(self, *argv: str) -> None:
        subprocess.run(_as(self.user, [str(POSTGRES_BIN / argv[0]), *argv[1:]]), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", "fast", "-w", "stop")
        except subprocess.CalledProcessError:
            pass  # not running
        shutil.rmtree(self.directory, ignore_errors=True)


def _as(user: str, argv: list[str]) -> list[str]:
    """``argv`` run as ``user`` when this process is root (PostgreSQL refuses to run as root)."""
    return ["runuser", "-u", user, "--", *argv] if os.geteuid() == 0 else argv


def start_postgres() -> PostgresCluster:
    """Create and start a PostgreSQL cluster in a new temporary directory.

    Under root, the cluster runs as the ``postgres`` user.
    """
    if not (POSTGRES_BIN / "initdb").exists():
        raise RuntimeError(f"PostgreSQL's programs are not in {POSTGRES_BIN}: install Debian's postgresql package, "
                           "or set POSTGRES_BIN.")
    user = "postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
    directory = Path(tempfile.mkdtemp(prefix="ls-postgres-"))
    if os.geteuid() == 0:
        shutil.chown(directory, user=user)
    cluster = PostgresCluster(directory, free_port(), user)
    try:
        cluster._run("initdb", "-D", str(directory / "data"), "-U", "labelstudio", "--auth=trust", "-E", "UTF8")
        cluster._run("pg_ctl", "-D", str(directory / "data"), "-l", str(directory / "postgres.log"), "-w", "-o",
                     f"-p {cluster.port} -k {directory} -c listen_addresses=127.0.0.1", "start")
        cluster._run("createdb", "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "labelstudio", "labelstudio")
    except BaseException:
        cluster.stop()
        raise
    return cluster


def start_production(data_dir: Path, *, workers: int = 4, command: str | None = None,
                     timeout: float = 300.0) -> LabelStudioServer:
    """Label Studio as production runs it: on PostgreSQL, served by uwsgi with ``workers`` processes.

    A first ``label-studio start`` on the new database migrates it and
    creates the admin and its token, then stops; then uwsgi serves Label
    Studio's WSGI application with the settings of its ``deploy/uwsgi.ini``
    (``http-keepalive`` added: its http router closes connections otherwise).
    uwsgi comes from the ``pyuwsgi`` package beside Label Studio.
    """
    cluster = start_postgres()
    try:
        start(data_dir, command=command, env=cluster.env, timeout=timeout).stop()
        bin_dir = Path(label_studio_command(command)).parent
        python = bin_dir / "python"
        where = "import label_studio, os; print(os.path.dirname(label_studio.__file__))"
        package = subprocess.run([str(python), "-c", where], check=True, capture_output=True,
                                 text=True).stdout.strip()
        port = free_port()
        argv = [str(bin_dir / "uwsgi"), "--http", f"127.0.0.1:{port}", "--http-keepalive=1",
                "--chdir", package, "--module", "core.wsgi:application", "--master", "--processes", str(workers),
                "--single-interpreter", "--need-app", "--die-on-term", "--vacuum", "--buffer-size", "65535",
                "--http-timeout", "300", "--harakiri", "360", "--ignore-sigpipe", "--ignore-write-errors",
                "--disable-write-exception", "--disable-logging"]
        env = _server_env(data_dir, {**cluster.env, "APP_WEBSERVER": "uwsgi",
                                     "DJANGO_SETTINGS_MODULE": "core.settings.label_studio"})
        log = open(data_dir / "uwsgi.log", "ab")  # noqa: SIM115 - closed with the process
        process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        server = LabelStudioServer(url=f"http://127.0.0.1:{port}", data_dir=data_dir, process=process,
                                   database=cluster)
    except BaseException:
        cluster.stop()
        raise
    return _wait_healthy(server, timeout)


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
