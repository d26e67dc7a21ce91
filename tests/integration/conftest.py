"""A real Label Studio (pip-installed, SQLite, loopback) for the integration tests.

The session migrates one template data dir; each test module starts its own
server on a copy. If Label Studio is not installed the tests fail, they do
not skip: `make test` installs it into .venv-ls.
"""

import os

import pytest

from plugin import localserver

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
