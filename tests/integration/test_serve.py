"""``ls-agreement serve`` in a subprocess against a real Label Studio and its real webhooks."""

import os
import subprocess
import sys
import time

import pytest
import requests
from label_studio_sdk import LabelStudio

from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.localserver import free_port, sign_up, stop_process as stop
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import Connection, MappingOptions, ScoringOptions
from plugin.state.project import ProjectState

SECRET = "integration-secret-123"
CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices>
<Labels name="ner" toName="text"><Label value="PER"/><Label value="ORG"/></Labels></View>"""


def results(choice, label="PER"):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [choice]}},
            {"from_name": "ner", "to_name": "text", "type": "labels",
             "value": {"start": 0, "end": 5, "text": "Alice", "labels": [label]}}]


HEADERS = {"X-Agreement-Secret": SECRET}


def start_service(label_studio_url, token, project, port, log, *extra, wait=True):
    """``ls-agreement serve`` in a subprocess; with ``wait``, return once it has read the project."""
    env = {**os.environ, "LABEL_STUDIO_URL": label_studio_url, "LABEL_STUDIO_API_KEY": token,
           "AGREEMENT_WEBHOOK_SECRET": SECRET}
    process = subprocess.Popen([sys.executable, "-m", "plugin", "serve", "--project", str(project), "--host",
                                "127.0.0.1", "--port", str(port), *extra], env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while wait and time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError("the service exited")
        try:
            status = status_of(url, project)
            if status["passes"] >= 1 and not status["pending_writes"]:  # a pass counts once requested, not written
                return process, url
        except (requests.RequestException, KeyError, ValueError):
            pass
        time.sleep(0.3)
    if wait:
        stop(process)
        raise AssertionError("the service did not come up")
    return process, url


def status_of(url, project):
    return requests.get(f"{url}/status", headers=HEADERS, timeout=5).json()["projects"][str(project)]


def wait_for(predicate, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out waiting for the task meta to follow")


@pytest.fixture(scope="module")
def setup(label_studio, tmp_path_factory):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="live", label_config=CONFIG)
    admin.projects.import_tasks(id=project.id, request=[{"data": {"text": f"Alice {i}"}, "meta": {"origin": i}}
                                                        for i in range(4)])
    tasks = sorted(t.id for t in admin.tasks.list(project=project.id, page_size=10))
    users = [LabelStudio(base_url=label_studio.url, api_key=sign_up(label_studio.url, f"live{i}@example.com")[1])
             for i in range(3)]
    # One annotation exists before the service starts: the reconcile must count it.
    users[0].annotations.create(id=tasks[0], result=results("pos"))
    log = open(tmp_path_factory.mktemp("service") / "service.log", "wb")  # noqa: SIM115
    process, url = start_service(label_studio.url, label_studio.token, project.id, free_port(), log)
    setup = {"admin": admin, "project": project.id, "tasks": tasks, "users": users, "url": url, "process": process,
             "log": log}
    yield setup
    stop(setup["process"])  # the process running now: a test restarts the service
    log.close()


def meta(setup, task):
    return setup["admin"].tasks.get(id=str(task)).meta


def test_meta_follows_creates_edits_and_deletes(setup):
    users, tasks = setup["users"], setup["tasks"]
    users[1].annotations.create(id=tasks[0], result=results("pos"))
    block = wait_for(lambda: (m := meta(setup, tasks[0]).get("agreement")) and m["n_annotations"] == 2 and m)
    assert block["controls"]["sentiment"]["spa"] == 1.0 and meta(setup, tasks[0])["origin"] == 0
    created = users[2].annotations.create(id=tasks[0], result=results("neg", "ORG"))
    block = wait_for(lambda: (m := meta(setup, tasks[0])["agreement"]) and m["n_annotations"] == 3 and m)
    assert block["controls"]["sentiment"]["spa"] == pytest.approx(1 / 3, abs=1e-6)
    users[2].annotations.update(id=created.id, result=results("pos"))
    wait_for(lambda: meta(setup, tasks[0])["agreement"]["controls"]["sentiment"]["spa"] == 1.0)
    setup["admin"].annotations.delete(id=created.id)
    wait_for(lambda: meta(setup, tasks[0])["agreement"]["n_annotations"] == 2)
    for who, choice, label in ((0, "pos", "PER"), (1, "neg", "ORG")):
        users[who].annotations.create(id=tasks[1], result=results(choice, label))
    block = wait_for(lambda: (m := meta(setup, tasks[1]).get("agreement")) and m["n_annotations"] == 2 and m)
    assert block["flagged"] and block["controls"]["sentiment"]["spa"] == 0.0
    assert meta(setup, tasks[1])["origin"] == 1


def test_status_equals_a_batch_sync(setup, label_studio):
    client = LabelStudioClient(Connection(url=label_studio.url, api_key=label_studio.token))
    batch = ProjectState.from_tasks(list(client.tasks(setup["project"])), parse_label_config(CONFIG),
                                    mapping=MappingOptions(), scoring=ScoringOptions()).scores()
    status = status_of(setup["url"], setup["project"])
    assert status["events"] >= 5 and status["pending_writes"] == 0
    for name, control in batch.controls.items():
        assert status["controls"][name]["spa"] == pytest.approx(control.spa, abs=1e-6)
        assert status["controls"][name]["alpha"] == pytest.approx(control.alpha, abs=1e-6)
        assert status["controls"][name]["ci"] == pytest.approx(list(control.spa_ci), abs=1e-6)


def test_wrong_secret_and_garbage(setup):
    url = setup["url"]
    assert requests.post(f"{url}/webhook", json={"action": "ANNOTATION_CREATED"}, timeout=5).status_code == 401
    assert requests.post(f"{url}/webhook", json={}, headers={"X-Agreement-Secret": "x" * 22}, timeout=5).status_code == 401
    assert requests.get(f"{url}/status", timeout=5).status_code == 401
    assert requests.get(f"{url}/status", params={"secret": SECRET}, timeout=5).status_code == 401
    assert requests.get(f"{url}/docs", timeout=5).status_code == 404
    for body in (b"\x00\x01garbage", b"{", b'{"action": "ANNOTATION_CREATED", "annotation": [1, 2]}',
                 b'{"action": "ANNOTATION_CREATED", "annotation": {"id": 1, "task": NaN}}'):
        answer = requests.post(f"{url}/webhook", data=body, headers=HEADERS, timeout=5)
        assert answer.status_code == 400
    assert requests.get(f"{url}/health", timeout=5).json() == {"status": "UP"}
    assert setup["process"].poll() is None


def test_one_webhook_however_often_the_service_starts(setup, label_studio, keep_process):
    hooks = setup["admin"].webhooks.list(project=str(setup["project"]))
    assert [h.url for h in hooks] == [f"{setup['url']}/webhook"]
    assert hooks[0].headers == {"X-Agreement-Secret": SECRET, "X-Agreement-Service": f"{setup['url']}/webhook"}
    port = int(setup["url"].rsplit(":", 1)[1])
    stop(setup["process"])
    setup["process"], _ = start_service(label_studio.url, label_studio.token, setup["project"], port, setup["log"])
    keep_process(setup["process"].pid)  # the module fixture stops it
    assert len(setup["admin"].webhooks.list(project=str(setup["project"]))) == 1
