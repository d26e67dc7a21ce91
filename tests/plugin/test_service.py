"""The web service with a fake Label Studio client: secret, shapes, coalesced writes, status equals batch."""

import copy
import threading

import pytest
from fastapi.testclient import TestClient

from plugin.service import ServiceSettings, create_app, parse_event
from plugin.settings import Connection, ScoringOptions
from plugin.sync import score_tasks
from tests.plugin.test_live import CONFIG, CONTROLS

SECRET = "s3cret-s3cret-s3cret"


class FakeLabelStudio:
    """In-memory stand-in for plugin.labelstudio.LabelStudioClient."""

    writers = 2

    def __init__(self, tasks):
        self.tasks_by_id = {t["id"]: copy.deepcopy(t) for t in tasks}
        self.writes = []
        self.webhooks = []
        self.lock = threading.Lock()

    def label_config(self, project):
        return CONFIG

    def tasks(self, project, on_total=None):
        return [copy.deepcopy(t) for t in self.tasks_by_id.values()]

    def task_meta(self, task):
        return copy.deepcopy(self.tasks_by_id[task]["meta"])

    def update_meta(self, task, meta):
        with self.lock:
            self.writes.append(task)
            self.tasks_by_id[task]["meta"] = copy.deepcopy(meta)

    def ensure_webhook(self, project, *, url, actions, headers):
        existing = [h for h in self.webhooks if h["url"] == url and h["project"] == project]
        if existing:
            existing[0].update(actions=list(actions), headers=headers)
        else:
            self.webhooks.append({"url": url, "project": project, "actions": list(actions), "headers": headers})
        return 1


def annotation(identifier, task, annotator, choice, second="00"):
    return {"id": identifier, "task": task, "completed_by": annotator, "was_cancelled": False,
            "updated_at": f"2026-01-01T00:00:{second}Z",
            "result": [{"from_name": "sentiment", "type": "choices", "value": {"choices": [choice]}}]}


def settings(coalesce=0.05):
    return ServiceSettings(projects=(1,), public_url="http://agreement.test", secret=SECRET,
                           connection=Connection(url="http://ls.test", api_key="k"),
                           scoring=ScoringOptions(n_resamples=50), coalesce_seconds=coalesce)


@pytest.fixture
def service():
    fake = FakeLabelStudio([{"id": t, "meta": {"keep": t}, "annotations": []} for t in (1, 2, 3)])
    app = create_app(settings(coalesce=0.2), fake)
    with TestClient(app) as client:
        yield client, app.state.agreement, fake


def post(client, payload, secret=SECRET):
    return client.post("/webhook", json=payload, headers={"X-Agreement-Secret": secret} if secret else {})


def settle(state):
    state.wait_processed(10)
    assert state.writer.wait_idle(10)


def test_the_secret_is_required(service):
    client, state, _ = service
    payload = {"action": "ANNOTATION_CREATED", "project": {"id": 1}, "annotation": annotation(1, 1, 1, "pos")}
    assert post(client, payload, secret=None).status_code == 401
    assert post(client, payload, secret="wrong").status_code == 401
    assert post(client, payload).status_code == 200
    assert client.post(f"/s/{SECRET}/webhook", json=payload).status_code == 200
    assert client.post("/s/nope/webhook", json=payload).status_code == 401
    assert state.rejected == 3


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe", b"[]", b'{"action": 3}',
                                  b'{"action": "ANNOTATION_CREATED", "annotation": "x"}',
                                  b'{"action": "ANNOTATIONS_DELETED", "annotations": [{"id": "a"}]}'])
def test_malformed_payloads_are_400_and_the_service_goes_on(service, body):
    client, state, fake = service
    answer = client.post("/webhook", content=body, headers={"X-Agreement-Secret": SECRET})
    assert answer.status_code == 400 and "detail" in answer.json()
    assert post(client, {"action": "ANNOTATION_CREATED", "annotation": annotation(1, 2, 1, "pos")}).status_code == 200
    settle(state)
    assert fake.tasks_by_id[2]["meta"]["agreement"]["n_annotations"] == 1


def test_unknown_actions_are_ignored(service):
    client, _, _ = service
    assert post(client, {"action": "PROJECT_UPDATED", "project": {"id": 1}}).json() == {"status": "ignored"}


def test_a_burst_on_one_task_is_one_write(service):
    client, state, fake = service
    fake.writes.clear()
    for second in range(10):
        choice = "pos" if second % 2 else "neg"
        post(client, {"action": "ANNOTATION_UPDATED", "project": {"id": 1},
                      "annotation": annotation(7, 1, 1, choice, f"{second:02d}"), "task": {"id": 1, "meta": {"keep": 1}}})
    post(client, {"action": "ANNOTATION_CREATED", "project": {"id": 1}, "annotation": annotation(8, 1, 2, "pos", "10")})
    settle(state)
    assert fake.writes == [1]
    meta = fake.tasks_by_id[1]["meta"]
    assert meta["keep"] == 1 and meta["agreement"]["controls"]["sentiment"]["spa"] == 1.0


def test_deletions_update_the_tasks_they_touch(service):
    client, state, fake = service
    post(client, {"action": "ANNOTATIONS_CREATED", "project": {"id": 1},
                  "annotation": [annotation(1, 3, 1, "pos"), annotation(2, 3, 2, "neg")], "task": [{"id": 3}]})
    settle(state)
    assert fake.tasks_by_id[3]["meta"]["agreement"]["controls"]["sentiment"]["spa"] == 0.0
    post(client, {"action": "ANNOTATIONS_DELETED", "project": {"id": 1}, "annotations": [{"id": 2}]})
    settle(state)
    assert fake.tasks_by_id[3]["meta"]["agreement"]["n_annotations"] == 1
    post(client, {"action": "TASKS_DELETED", "project": {"id": 1}, "tasks": [{"id": 3}]})
    settle(state)
    assert "3" not in str(state.projects[1].tasks)


def test_status_equals_a_batch_computation(service):
    client, state, _ = service
    events = [annotation(1, 1, 1, "pos"), annotation(2, 1, 2, "pos"), annotation(3, 2, 1, "neg"),
              annotation(4, 2, 2, "pos"), annotation(5, 2, 3, "neu"), annotation(6, 3, 3, "neg")]
    for event in events:
        post(client, {"action": "ANNOTATION_CREATED", "project": {"id": 1}, "annotation": event})
    settle(state)
    status = client.get("/status").json()["projects"]["1"]
    assert status["events"] == 6 and status["pending_writes"] == 0
    tasks = [{"id": t, "meta": {}, "annotations": [e for e in events if e["task"] == t]} for t in (1, 2, 3)]
    batch = score_tasks(tasks, CONTROLS, mapping=state.settings.mapping, scoring=state.settings.scoring)
    sentiment = status["controls"]["sentiment"]
    assert sentiment["spa"] == pytest.approx(batch.controls["sentiment"].spa)
    assert sentiment["alpha"] == pytest.approx(batch.controls["sentiment"].alpha)
    assert sentiment["n_items"] == 3 and sentiment["n_annotations"] == 6
    assert sentiment["ci"][0] <= sentiment["spa"] <= sentiment["ci"][1]


def test_ml_backend_contract_and_webhook_registration(service):
    client, _, fake = service
    assert client.get("/health").json()["status"] == "UP"
    assert client.post("/setup", json={"project": "1.1"}).json() == {"model_version": "agreement-0.1.0"}
    assert client.post("/predict", json={"tasks": [{"id": 1}]}).json() == {"results": []}
    assert fake.webhooks == [{"url": "http://agreement.test/webhook", "project": 1,
                              "actions": ["ANNOTATION_CREATED", "ANNOTATIONS_CREATED", "ANNOTATION_UPDATED",
                                          "ANNOTATIONS_DELETED", "TASKS_DELETED"],
                              "headers": {"X-Agreement-Secret": SECRET}}]


def test_a_restart_registers_no_second_webhook():
    fake = FakeLabelStudio([{"id": 1, "meta": {}, "annotations": []}])
    for _ in range(2):
        with TestClient(create_app(settings(), fake)):
            pass
    assert len(fake.webhooks) == 1


def test_reconcile_writes_what_changed_while_the_service_was_down():
    fake = FakeLabelStudio([{"id": 1, "meta": {"keep": 1}, "annotations": [annotation(1, 1, 1, "pos"),
                                                                           annotation(2, 1, 2, "neg")]},
                            {"id": 2, "meta": {}, "annotations": []}])
    app = create_app(settings(), fake)
    with TestClient(app):
        assert app.state.agreement.writer.wait_idle(10)
    assert fake.writes == [1]
    assert fake.tasks_by_id[1]["meta"]["agreement"]["controls"]["sentiment"]["spa"] == 0.0
    assert fake.tasks_by_id[1]["meta"]["keep"] == 1


def test_parse_event_keeps_nothing_of_the_project_object():
    event = parse_event({"action": "ANNOTATION_CREATED", "project": {"id": 4, "token": "secret-token"},
                         "annotation": annotation(1, 2, 3, "pos"), "task": {"id": 2, "meta": {"a": 1}}})
    assert event.project == 4 and "secret-token" not in repr(event)
