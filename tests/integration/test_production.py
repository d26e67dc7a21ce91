"""Label Studio as production runs it: PostgreSQL 15 and four uwsgi workers (its deploy/uwsgi.ini, with
http-keepalive). The core must hold there as on the development server: a second sync writes nothing, serve follows
annotations and converges (a dry-run sync then finds nothing to write), changed-only passes make Label Studio log no
naive-datetime warning, and a project created while serving with --project all is picked up."""

import json
import os
import signal
import subprocess
import time

import pytest

from plugin.cli import main
from plugin.labelstudio.localserver import free_port, start_production

from .conftest import LABEL_STUDIO_BIN, text_project
from .test_serve import HEADERS, start_service, stop, wait_for

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices></View>"""


def choice(value):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [value]}}]


@pytest.fixture(scope="module")
def production(tmp_path_factory):
    server = start_production(tmp_path_factory.mktemp("label-studio-production") / "server", workers=4,
                              command=LABEL_STUDIO_BIN)
    yield server
    # uwsgi's workers that have served requests outlast the SIGTERM server.stop() sends, until it kills them 20 s
    # later; SIGINT to the master ends them all within seconds. server.stop() then stops PostgreSQL.
    os.kill(server.process.pid, signal.SIGINT)
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pass  # server.stop() kills it
    server.stop()


def sync(capsys, server, project, *extra):
    status = main(["sync", "--project", str(project), "--url", server.url, "--api-key", server.token, "--json",
                   "--quiet", *extra])
    out = capsys.readouterr().out
    assert status == 0, out
    return json.loads(out)


@pytest.mark.slow
def test_sync_serve_and_passes_on_postgresql_with_four_workers(production, capsys, tmp_path):
    import requests

    admin, project, tasks, users = text_project(production, title="on postgresql", config=CONFIG, n_tasks=12,
                                                annotators=[f"pg{i}@example.com" for i in range(3)])
    for i, task in enumerate(tasks[:6]):
        users[0].annotations.create(id=task, result=choice("pos"))
        users[1].annotations.create(id=task, result=choice("pos" if i % 2 else "neg"))
    first = sync(capsys, production, project)
    assert first["tasks_written"] == first["tasks_to_write"] == 6  # the annotated tasks
    assert sync(capsys, production, project)["tasks_written"] == 0

    with open(tmp_path / "service.log", "wb") as log:
        process, url = start_service(production.url, production.token, "all", free_port(), log,
                                     "--reconcile-interval", "2", "--full-pass-every", "1000",
                                     "--discover-interval", "1", wait=False)
        try:
            def status():
                try:
                    return requests.get(f"{url}/status", headers=HEADERS, timeout=5).json()
                except (requests.RequestException, ValueError):
                    return None

            wait_for(lambda: (s := status()) and s["projects"].get(str(project), {}).get("passes", 0) >= 1, 60)
            for i, task in enumerate(tasks[6:]):
                users[2].annotations.create(id=task, result=choice("neg"))
                users[i % 2].annotations.create(id=task, result=choice("neg" if i % 3 else "pos"))
            for task in tasks[6:]:
                wait_for(lambda task=task: (admin.tasks.get(id=str(task)).meta or {}).get("agreement", {})
                         .get("n_annotations") == 2)
            later = admin.projects.create(title="created while serving", label_config=CONFIG).id
            wait_for(lambda: status()["projects"].get(str(later), {}).get("passes", 0) >= 1, 30)
            passes = status()["projects"][str(project)]["passes"]
            wait_for(lambda: status()["projects"][str(project)]["passes"] >= passes + 2, 30)  # changed-only passes
            assert status()["projects"][str(project)]["last_pass"]["kind"] == "changed"
            deadline = time.monotonic() + 30
            while sync(capsys, production, project, "--dry-run")["tasks_to_write"] and time.monotonic() < deadline:
                time.sleep(1)
            assert sync(capsys, production, project, "--dry-run")["tasks_to_write"] == 0
            assert status()["errors"] == {}
        finally:
            stop(process)
    assert "received a naive datetime" not in (production.data_dir / "uwsgi.log").read_text(errors="replace")
