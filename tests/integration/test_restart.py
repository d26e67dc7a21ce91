"""``ls-agreement serve --state-dir`` against a real Label Studio: a restart restores each project's state and reads
only the tasks changed while the service was down; a file it cannot trust is refused and every task is read."""

import pytest
from label_studio_sdk import LabelStudio

from plugin.labelconfig import parse_label_config
from plugin.labelstudio import LabelStudioClient
from plugin.localserver import free_port
from plugin.settings import Connection, MappingOptions, ScoringOptions
from plugin.state import ProjectState

from .conftest import text_project
from .test_serve import CONFIG, results, start_service, status_of, stop, wait_for


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
