"""A real Label Studio (pip-installed, SQLite, loopback) for the integration tests.

The session migrates one template data dir; each test module starts its own
server on a copy. If Label Studio is not installed the tests fail, they do
not skip: `make test` installs it into .venv-ls.
"""

import os

import pytest
from label_studio_sdk import LabelStudio

from plugin.labelstudio import localserver

# The test session is an entry point: it reads where `make test` installed Label Studio.
LABEL_STUDIO_BIN = os.environ.get("LABEL_STUDIO_BIN")


@pytest.fixture(scope="session")
def label_studio_template(tmp_path_factory):
    return localserver.migrated_template(tmp_path_factory.mktemp("label-studio-template"), command=LABEL_STUDIO_BIN)


@pytest.fixture(scope="module")
def label_studio(label_studio_template, tmp_path_factory):
    server = localserver.start_copy(label_studio_template, tmp_path_factory.mktemp("label-studio") / "server",
                                    command=LABEL_STUDIO_BIN)
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
