"""A real Label Studio (pip-installed, SQLite, loopback) for the integration tests.

The session migrates one template data dir; each test module starts its own
server on a copy. If Label Studio is not installed the tests fail, they do
not skip: `make test` installs it into .venv-ls.
"""

import pytest

from plugin import localserver as labelstudio_server


@pytest.fixture(scope="session")
def label_studio_template(tmp_path_factory):
    return labelstudio_server.migrated_template(tmp_path_factory.mktemp("label-studio-template"))


@pytest.fixture(scope="module")
def label_studio(label_studio_template, tmp_path_factory):
    server = labelstudio_server.start_copy(label_studio_template, tmp_path_factory.mktemp("label-studio") / "server")
    yield server
    server.stop()
