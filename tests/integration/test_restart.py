"""``ls-agreement serve --state-dir`` and ``sync --state-dir`` against a real Label Studio: a restart (a sync)
restores each project's state and reads only the tasks changed while the service was down (since the last sync); a
file it cannot trust is refused and every task is read."""

import json

import pytest
from label_studio_sdk import LabelStudio

from plugin.cli import main
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.localserver import free_port
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import Connection, MappingOptions, ScoringOptions
from plugin.state.project import ProjectState

from .conftest import text_project
from .test_serve import CONFIG, SECRET, results, start_service, status_of, stop, wait_for


@pytest.mark.slow
def test_a_restart_restores_the_state_and_reads_only_what_changed_while_it_was_down(label_studio, tmp_path):
    admin, project, tasks, users = text_project(label_studio, title="restart", config=CONFIG, n_tasks=12,
                                                annotators=("restart0@example.com", "restart1@example.com"))
    for number, task in enumerate(tasks):
        users[0].annotations.create(id=task, result=results("pos"))
        users[1].annotations.create(id=task, result=results("pos" if number % 3 else "neg", "ORG"))
    states, port = tmp_path / "states", free_port()
    with open(tmp_path / "service.log", "wb") as log:
        process, url = start_service(label_studio.url, label_studio.token, project, port, log,
                                     "--state-dir", str(states), "--reconcile-interval", "1")
        try:  # a pass of changed tasks reads back what the first pass wrote, and saves the state again
            saved = wait_for(lambda: (s := status_of(url, project))["last_pass"]["kind"] == "changed"
                             and s["last_pass"]["stale"] == 0 and s["pending_writes"] == 0
                             and "saved" in s["saved_state"] and s["saved_state"]["saved"])
        finally:
            stop(process)
        assert saved["n_tasks"] == 12 and sorted(p.name for p in states.iterdir()) == [f"project-{project}.state"]

        annotation = admin.annotations.list(id=tasks[4])[0]  # while the service is down
        admin.annotations.update(id=annotation.id, result=results("neg", "ORG"))

        process, url = start_service(label_studio.url, label_studio.token, project, port, log,
                                     "--state-dir", str(states))
        try:
            status = status_of(url, project)
            assert status["saved_state"]["restored"]["n_tasks"] == 12 and "refused" not in status["saved_state"]
            assert status["last_pass"]["kind"] == "changed"  # not a full read
            assert 1 <= status["last_pass"]["n_tasks"] <= 12
            wait_for(lambda: status_of(url, project)["pending_writes"] == 0)
        finally:
            stop(process)

        client = LabelStudioClient(Connection(url=label_studio.url, api_key=label_studio.token))
        batch = ProjectState.from_tasks(list(client.tasks(project)), parse_label_config(CONFIG),
                                        mapping=MappingOptions(), scoring=ScoringOptions())
        assert batch.stale_tasks() == []  # every block, the changed task's too, as a full read computes it
        block = LabelStudio(base_url=label_studio.url, api_key=label_studio.token).tasks.get(id=str(tasks[4])).meta
        assert block["agreement"]["controls"]["sentiment"]["spa"] == pytest.approx(batch.scores().tasks[
            tasks[4]].controls["sentiment"]["spa"])

        path = states / f"project-{project}.state"
        data = bytearray(path.read_bytes())
        data[-1] ^= 0x01  # altered on disk
        path.write_bytes(bytes(data))
        process, url = start_service(label_studio.url, label_studio.token, project, port, log,
                                     "--state-dir", str(states))
        try:
            status = status_of(url, project)
            assert "was altered" in status["saved_state"]["refused"]["reason"]
            assert status["last_pass"]["kind"] == "full" and status["last_pass"]["n_tasks"] == 12
        finally:
            stop(process)
    assert "integration-secret" not in (tmp_path / "service.log").read_text()


def test_a_sync_restores_the_last_one_s_state_and_reads_only_what_changed_since(label_studio, tmp_path, capsys,
                                                                                monkeypatch):
    admin, project, tasks, users = text_project(label_studio, title="sync state", config=CONFIG, n_tasks=12,
                                                annotators=("syncstate0@example.com", "syncstate1@example.com"))
    for number, task in enumerate(tasks):
        users[0].annotations.create(id=task, result=results("pos"))
        users[1].annotations.create(id=task, result=results("pos" if number % 3 else "neg", "ORG"))
    monkeypatch.setenv("AGREEMENT_WEBHOOK_SECRET", SECRET)
    states = tmp_path / "states"

    def sync(*extra):
        status = main(["sync", "--project", str(project), "--url", label_studio.url, "--api-key", label_studio.token,
                       "--state-dir", str(states), "--json", "--quiet", *extra])
        out = capsys.readouterr().out
        assert status == 0, out
        return json.loads(out)

    first = sync()
    assert first["read"] == {"kind": "full", "n_tasks": 12} and first["tasks_written"] == 12
    assert first["saved_state"]["saved"]["n_tasks"] == 12 and "missing" in first["saved_state"]
    # the tasks the first wrote changed after its read: listed, and held as written (each write's answer, with its
    # stamp, saved with the state), so none is read in full, and nothing to write
    again = sync()
    assert again["read"] == {"kind": "changed", "n_tasks": 0} and again["tasks_written"] == 0
    annotation = admin.annotations.list(id=tasks[4])[0]
    admin.annotations.update(id=annotation.id, result=results("neg", "ORG"))
    second = sync()  # every task is listed (the minute before the watermark), the edited one alone read in full
    assert second["read"] == {"kind": "changed", "n_tasks": 1}, second["read"]
    assert second["saved_state"]["restored"]["n_tasks"] == 12 and second["tasks_written"] >= 1
    assert second["n_tasks"] == 12  # the whole project is reported
    client = LabelStudioClient(Connection(url=label_studio.url, api_key=label_studio.token))
    batch = ProjectState.from_tasks(list(client.tasks(project)), parse_label_config(CONFIG),
                                    mapping=MappingOptions(), scoring=ScoringOptions())
    assert batch.stale_tasks() == []  # every block, the changed task's too, as a full read computes it
    assert second["controls"]["sentiment"]["alpha"] == pytest.approx(batch.scores().controls["sentiment"].summary()[
        "alpha"])
    out = tmp_path / "report.html"  # a report starts from the state the sync saved
    assert main(["report", "--project", str(project), "--url", label_studio.url, "--api-key", label_studio.token,
                 "--state-dir", str(states), "--out", str(out), "--quiet"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said[0].startswith("Wrote the report of 12 tasks") and out.stat().st_size > 0
    assert said[1].startswith("Read ") and "tasks changed since the saved state of" in said[1], said
    assert said[2].startswith("Saved the project's state (12 tasks, "), said
    monkeypatch.setenv("AGREEMENT_WEBHOOK_SECRET", "another-" + SECRET)
    third = sync()
    assert third["read"] == {"kind": "full", "n_tasks": 12} and third["tasks_written"] == 0
    assert "not signed with this service's secret" in third["saved_state"]["refused"]["reason"]
    assert SECRET not in json.dumps(third)
