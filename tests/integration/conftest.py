"""A real Label Studio (pip-installed, SQLite, loopback) for the integration tests.

The session migrates one template data dir (``label_studio_template``, in
tests/conftest.py); each test module starts its own server on a copy, and the
next module's copy starts while this module runs. If Label Studio is not
installed the tests fail, they do not skip: `make test` installs it into
.venv-ls.
"""

import os
import threading
import time
from pathlib import Path

import pytest
from label_studio_sdk import LabelStudio

from plugin.labelstudio import localserver
from tests.processes import descendants

# The test session is an entry point: it reads where `make test` installed Label Studio.
LABEL_STUDIO_BIN = os.environ.get("LABEL_STUDIO_BIN")


class Copies:
    """Label Studio servers on copies of the template, one for each module that uses ``label_studio``.

    A server takes ~10 s to start, most of it one core's work, while an integration module mostly waits: so when a
    module takes its server, the next module's starts in a thread. Its process exists before the module's fixture
    returns, so the guard in tests/conftest.py counts it among the processes there before each test.
    """

    def __init__(self, template: Path, factory: pytest.TempPathFactory, modules: int):
        self.template, self.factory, self.modules = template, factory, modules
        self.next: tuple[threading.Thread, dict] | None = None

    def _start(self) -> localserver.LabelStudioServer:
        return localserver.start_copy(self.template, self.factory.mktemp("label-studio") / "server",
                                      command=LABEL_STUDIO_BIN)

    def _start_next(self) -> None:
        before, outcome = set(descendants()), {}

        def start():
            try:
                outcome["server"] = self._start()
            except BaseException as error:  # noqa: BLE001 - raised again in the module that takes the server
                outcome["error"] = error

        thread = threading.Thread(target=start, name="next Label Studio", daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while thread.is_alive() and not set(descendants()) - before and time.monotonic() < deadline:
            time.sleep(0.05)
        self.next = (thread, outcome)

    def _started(self) -> localserver.LabelStudioServer:
        thread, outcome = self.next
        self.next = None
        thread.join()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["server"]

    def take(self) -> localserver.LabelStudioServer:
        server = self._started() if self.next else self._start()
        self.modules -= 1
        if self.modules > 0:
            self._start_next()
        return server

    def stop(self) -> None:
        """Stop a server started for a module that did not run (the session ended first)."""
        if self.next:
            thread, outcome = self.next
            thread.join()
            if "server" in outcome:  # else it failed to start: nothing to stop
                outcome["server"].stop()


@pytest.fixture(scope="session")
def label_studio_copies(label_studio_template, tmp_path_factory, request):
    here = Path(__file__).parent
    modules = {item.path for item in request.session.items
               if "label_studio" in item.fixturenames and here in item.path.parents}
    copies = Copies(label_studio_template, tmp_path_factory, len(modules))
    yield copies
    copies.stop()


@pytest.fixture(scope="module")
def label_studio(label_studio_copies):
    server = label_studio_copies.take()
    yield server
    server.stop()


def text_project(server, *, title, config, n_tasks, annotators=()):
    """A project on ``server`` of ``n_tasks`` texts (``t0``, ``t1``, ...) labeled with ``config``: the admin's
    client, the project's id, its task ids (ascending), and a client for each of ``annotators`` (emails), each
    signed up as a user of their own."""
    admin = LabelStudio(base_url=server.url, api_key=server.token)
    project = admin.projects.create(title=title, label_config=config).id
    admin.projects.import_tasks(id=project, request=[{"data": {"text": f"t{i}"}} for i in range(n_tasks)])
    tasks = sorted(t.id for t in admin.tasks.list(project=project, page_size=100))
    users = [LabelStudio(base_url=server.url, api_key=localserver.sign_up(server.url, email)[1])
             for email in annotators]
    return admin, project, tasks, users
