"""``/metrics`` against an in-memory Label Studio: the secret, values equal to ``/status``'s, names, bounds, events."""

import math
import random
import time

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from plugin.labelstudio.client import REQUEST_OUTCOMES, LabelStudioClient, LabelStudioError
from plugin.service.app import create_app
from plugin.settings import Connection, ScoringOptions, SettingsError
from plugin.state.project import ProjectState
from tests.plugin.fake_label_studio import SECRET, FakeLabelStudio, annotation
from tests.plugin.service.test_app import created, settings, settle, wait_for

HEADER = {"X-Agreement-Secret": SECRET}
CHOICES = ("pos", "neg", "neu")

# The contract (the names alert rules and dashboards are written against), by type.
GAUGES = {"build_info", "shard_info", "project_owned", "project_seen", "agreement", "agreement_ci_lower",
          "agreement_ci_upper", "threshold", "items", "annotations", "not_scored", "tasks", "tasks_scored",
          "tasks_flagged", "annotator_accuracy", "annotator_answers", "annotators", "skipped_results", "last_pass_timestamp_seconds",
          "label_studio_up", "saved_state_age_seconds", "reconcile_interval_seconds"}
COUNTERS = {"passes", "label_studio_requests", "writes"}
HISTOGRAMS = {"event_to_meta_seconds", "event_queue_seconds", "event_read_seconds", "event_scoring_seconds",
              "event_write_seconds", "pass_duration_seconds"}
LABELS = {"project", "control", "measure", "annotator", "reason", "kind", "outcome", "version", "python", "shard",
          "shards", "le"}


def results(rnd, truth, who, n_annotators):
    """One annotator's labels of a task: a choice, a rating and a span, wrong more often the higher ``who`` is."""
    wrong = rnd.random() < 0.8 * who / (n_annotators + 1)
    choice = rnd.choice([c for c in CHOICES if c != truth]) if wrong else truth
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [choice]}},
            {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": 1 + (wrong + who) % 4}},
            {"from_name": "ner", "to_name": "text", "type": "labels",
             "value": {"start": 0, "end": 5 + wrong, "text": "hello", "labels": ["ORG" if wrong else "PER"]}}]


def labeled_tasks(n_tasks=12, n_annotators=3, per_task=3, seed=0):
    """Tasks labeled on three controls by annotators 1..n, one result skipped (a control not in the config)."""
    rnd = random.Random(seed)
    tasks, identifier = [], 0
    for task in range(1, n_tasks + 1):
        truth = rnd.choice(CHOICES)
        found = []
        for who in rnd.sample(range(1, n_annotators + 1), per_task):
            identifier += 1
            found.append({**annotation(identifier, task, who, truth), "result": results(rnd, truth, who, n_annotators)})
        tasks.append({"id": task, "data": {"text": "hello world"}, "meta": {}, "annotations": found})
    tasks[0]["annotations"][0]["result"].append({"from_name": "nope", "to_name": "text", "type": "choices",
                                                 "value": {"choices": ["x"]}})
    return tasks


@pytest.fixture
def fake():
    return FakeLabelStudio(labeled_tasks())


def running(fake, **changes):
    """The app and its state (a TestClient starts it)."""
    app = create_app(settings(**changes), fake)
    return app, app.state.agreement


def scrape(client, **headers):
    answer = client.get("/metrics", headers=headers or HEADER)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return answer.text


def series(text, name, *keys, project="1"):
    """The samples named ``name``, by the values of ``keys`` (those of ``project`` where they name one; None: all)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name != name or project is not None and sample.labels.get("project", project) != project:
                continue
            key = tuple(sample.labels[k] for k in keys)
            assert key not in found, f"{name} has two samples {key}"
            found[key] = sample.value
    return found


def projects_in(text, name):
    """The projects the samples named ``name`` show."""
    return {sample.labels["project"] for family in text_string_to_metric_families(text) for sample in family.samples
            if sample.name == name}


def status_of(client):
    return client.get("/status", headers=HEADER).json()


def live_values(control):
    """A control's live values in ``/status``, by measure label, as ``/metrics`` names them."""
    values = {"spa": control["spa"], "alpha": control["alpha"], control["gwet"]["coefficient"].lower():
              control["gwet"]["value"]}
    values.update({f"f1_{match}": value for match, value in (control.get("f1") or {}).items()})
    return {measure: value for measure, value in values.items() if value is not None}


# --- the door ---

def test_metrics_need_the_secret_in_one_of_three_forms(fake):
    app, state = running(fake)
    with TestClient(app) as client:
        assert state.wait_ready(10)
        for headers in ({}, {"X-Agreement-Secret": "wrong"}, {"Authorization": "Bearer wrong"},
                        {"Authorization": SECRET}, {"Authorization": f"Basic {SECRET}"},
                        {"Authorization": "Bearer"}, {"Authorization": f"Token {SECRET}"}):
            assert client.get("/metrics", headers=headers).status_code == 401, headers
        assert client.get(f"/metrics?secret={SECRET}").status_code == 401
        assert client.get("/s/wrong-secret-wrong/metrics").status_code == 401
        rejected = state.rejected
        assert scrape(client, **{"X-Agreement-Secret": SECRET})
        assert scrape(client, Authorization=f"Bearer {SECRET}")
        assert scrape(client, Authorization=f"bearer  {SECRET}")
        assert client.get(f"/s/{SECRET}/metrics").status_code == 200
        # the third form opens every guarded route, as the other two do
        assert client.get("/status", headers={"Authorization": f"Bearer {SECRET}"}).status_code == 200
        assert client.post("/setup", headers={"Authorization": f"Bearer {SECRET}"}).status_code == 200
        assert state.rejected == rejected
        assert client.get("/health").status_code == 200


def test_the_secret_tokens_and_payloads_never_appear_in_the_scrape(fake):
    app, state = running(fake)
    with TestClient(app) as client:
        assert state.wait_ready(10)
        fake.annotate(2, annotation(500, 2, 9, "neg"))
        payload = created(2, 500)
        payload["annotation"]["result"] = [{"from_name": "sentiment", "value": {"choices": ["payload-choice"]}}]
        assert client.post("/webhook", json=payload, headers=HEADER).status_code == 200
        client.get("/metrics", headers={"Authorization": "Bearer not-the-secret-at-all"})
        settle(state)
        for text in (scrape(client), client.get(f"/s/{SECRET}/metrics").text,
                     client.get("/metrics", headers={"Authorization": "Bearer nope"}).text):
            assert SECRET not in text and "project-token" not in text and "payload" not in text
            assert "not-the-secret" not in text and "ls.test" not in text


# --- values: the same as /status's at the same moment ---

def test_the_scrape_equals_status(fake):
    app, state = running(fake, metrics_annotators=100,
                         scoring=ScoringOptions(n_resamples=50, thresholds={"sentiment": 0.7}))
    with TestClient(app) as client:
        assert state.wait_ready(10) and state.writer.wait_idle(10)
        for identifier, task in ((900, 3), (901, 4)):
            fake.annotate(task, annotation(identifier, task, 7, "neu"))
            client.post("/webhook", json=created(task, identifier), headers=HEADER)
        settle(state)
        text, status = scrape(client), status_of(client)
        project = status["projects"]["1"]

        agreement = series(text, "ls_agreement_agreement", "control", "measure")
        expected = {(name, measure): value for name, control in project["controls"].items()
                    for measure, value in live_values(control).items()}
        assert agreement == expected
        assert {measure for _, measure in agreement} == {"spa", "alpha", "ac1", "ac2", "f1_exact", "f1_overlap"}
        for name, bound in (("ls_agreement_agreement_ci_lower", 0), ("ls_agreement_agreement_ci_upper", 1)):
            assert series(text, name, "control", "measure") == {
                (control, "spa"): c["ci"][bound] for control, c in project["controls"].items() if c["ci"]}
        for name, key in (("ls_agreement_items", "n_items"), ("ls_agreement_annotations", "n_annotations")):
            assert series(text, name, "control") == {(control, ): c[key] for control, c in project["controls"].items()}
        assert series(text, "ls_agreement_threshold", "control") == {
            (c, ): 0.7 if c == "sentiment" else 0.5 for c in project["controls"]}
        accuracy = series(text, "ls_agreement_annotator_accuracy", "control", "annotator")
        by_id = state.monitors[1].status()["controls"]  # /status names the annotators; /metrics gives their ids
        assert accuracy == {(control, who): value for control, c in by_id.items() if "consensus" in c
                            for who, value in c["consensus"]["accuracy"].items()}
        people = state.people.known()
        assert accuracy and all(project["controls"][control]["consensus"]["accuracy"][people.get(who, who)] == value
                                for (control, who), value in accuracy.items())
        answers = series(text, "ls_agreement_annotator_answers", "control", "annotator")
        assert answers.keys() == accuracy.keys()
        assert answers == {(control, who): by_id[control]["consensus"]["n_answers"][who] for control, who in answers}
        assert all(project["controls"][control]["consensus"]["n_answers"][people.get(who, who)] == value
                   for (control, who), value in answers.items())
        assert any(people.get(who, who) != who for _, who in answers)  # /status names them, as for the accuracy
        assert all(value >= 1 for value in answers.values())
        assert series(text, "ls_agreement_tasks") == {(): project["n_tasks"]} == {(): 12}
        assert series(text, "ls_agreement_skipped_results", "reason") == {
            (reason, ): n for reason, n in project["skipped"].items()}
        assert project["skipped"]
        last = project["last_pass"]
        assert series(text, "ls_agreement_tasks_scored") == {(): last["n_scored"]}
        assert series(text, "ls_agreement_tasks_flagged") == {(): last["n_flagged"]}
        assert not series(text, "ls_agreement_not_scored", "control") and not project["not_scored"]
        assert series(text, "ls_agreement_writes_total", "outcome") == {(k, ): v for k, v in status["writes"].items()}
        assert status["writes"]["written"] >= 12
        assert series(text, "ls_agreement_label_studio_up") == {(): 1.0} and status["label_studio"]["reachable"]
        assert series(text, "ls_agreement_passes_total", "kind") == {("full", ): project["passes"], ("changed", ): 0}
        assert series(text, "ls_agreement_project_owned", "project", project=None) == {("1", ): 1}
        assert series(text, "ls_agreement_project_seen", "project", project=None) == {("1", ): 1}
        assert series(text, "ls_agreement_shard_info", "shard", "shards") == {("1", "1"): 1}
        assert series(text, "ls_agreement_reconcile_interval_seconds") == {(): 3600.0}
        assert series(text, "ls_agreement_build_info", "version") == {(status["version"], ): 1}
        assert not series(text, "ls_agreement_saved_state_age_seconds")  # no --state-dir


def test_flagged_and_scored_tasks_are_the_last_pass_counts(fake):
    app, state = running(fake)
    with TestClient(app) as client:
        assert state.wait_ready(10) and state.writer.wait_idle(10)
        batch = ProjectState.from_tasks(fake.tasks(1), state.monitors[1].state.control_specs,
                                        mapping=state.settings.mapping, scoring=state.settings.scoring).scores()
        scores = batch.tasks
        flagged = sum(score.flagged for score in scores.values())
        text = scrape(client)
        assert series(text, "ls_agreement_tasks_flagged") == {(): flagged} and 0 < flagged < 12
        assert series(text, "ls_agreement_tasks_scored") == {(): sum(not math.isnan(v) for v in scores.score_values())}


def test_label_studio_down_shows_in_up_and_requests(fake):
    app, state = running(fake)
    with TestClient(app) as client:
        assert state.wait_ready(10) and state.writer.wait_idle(10)
        down = lambda: LabelStudioError("Label Studio could not be reached: ConnectError")  # noqa: E731
        fake.fail["tasks"] = fake.fail["label_config"] = down
        fake.reachability.count("unreachable")  # the real client counts each request it sends (test below)
        state.request_pass(1)
        assert wait_for(lambda: not status_of(client)["label_studio"]["reachable"])
        text, status = scrape(client), status_of(client)
        assert series(text, "ls_agreement_label_studio_up") == {(): 0.0} and not status["label_studio"]["reachable"]
        assert series(text, "ls_agreement_label_studio_requests_total", "outcome") == {
            ("ok", ): 0, ("client_error", ): 0, ("server_error", ): 0, ("unreachable", ): 1}
        fake.fail.clear()


def test_requests_to_label_studio_are_counted_by_outcome_where_they_are_sent():
    answers = iter([httpx.Response(200, json={"id": 1, "label_config": "<View/>"}),
                    httpx.Response(404, json={"detail": "Not found."}),
                    httpx.Response(502, text="bad gateway"), httpx.Response(200, text="<html>portal</html>"),
                    "refused", httpx.Response(200, json={"id": 1, "label_config": "<View/>"})])

    def handler(request):
        answer = next(answers)
        if answer == "refused":
            raise httpx.ConnectError("refused", request=request)
        return answer

    client = LabelStudioClient(Connection(url="http://ls.test", api_key="k" * 40, retries=3, backoff=0.01),
                               httpx_client=httpx.Client(transport=httpx.MockTransport(handler)), sleep=lambda _: None)
    client.label_config(1)
    with pytest.raises(LabelStudioError):
        client.label_config(2)
    client.label_config(1)  # 502, a page that is not JSON, refused, then the answer: four requests, one call
    assert client.reachability.requests() == {"ok": 2, "client_error": 1, "server_error": 2, "unreachable": 1}
    assert tuple(client.reachability.requests()) == REQUEST_OUTCOMES


# --- names ---

def test_the_names_follow_the_conventions(fake, tmp_path):
    app, state = running(fake, state_dir=tmp_path)
    with TestClient(app) as client:
        assert state.wait_ready(10) and state.writer.wait_idle(10)
        fake.annotate(2, annotation(700, 2, 8, "neg"))
        client.post("/webhook", json=created(2, 700), headers=HEADER)
        settle(state)
        assert wait_for(lambda: "saved" in state.monitors[1].saved_state())
        first = scrape(client)
        with state.monitors[1]._lock:  # a bug keeps a control from being scored: its gauge shows it
            state.monitors[1].state.not_scored["quality"] = "a bug"
        second = scrape(client)
        state.monitors[1].state.not_scored.clear()
    families = [*text_string_to_metric_families(first), *text_string_to_metric_families(second)]
    kinds = {}
    for family in families:
        assert family.name.startswith("ls_agreement_"), family.name
        kinds.setdefault(family.type, set()).add(family.name.removeprefix("ls_agreement_"))
        for sample in family.samples:
            assert "task" not in sample.labels and set(sample.labels) <= LABELS, sample
            if family.type == "counter":
                assert sample.name.endswith("_total"), sample.name
            if family.name.endswith("_seconds") and family.type == "histogram":
                assert sample.name.startswith(family.name)
    assert kinds == {"gauge": GAUGES, "counter": COUNTERS, "histogram": HISTOGRAMS}
    shown = {family.name for family in families if family.samples}
    assert shown == {family.name for family in families}  # each metric of the contract, seen at work
    assert 0 <= series(first, "ls_agreement_saved_state_age_seconds")[()] < 60
    assert not series(first, "ls_agreement_not_scored", "control")
    assert series(second, "ls_agreement_not_scored", "control") == {("quality", ): 1}


# --- bounded ---

def test_accuracy_is_shown_for_the_least_accurate_annotators_only():
    fake = FakeLabelStudio(labeled_tasks(n_tasks=60, n_annotators=30, per_task=5, seed=3))
    app, state = running(fake, metrics_annotators=4)
    with TestClient(app) as client:
        assert state.wait_ready(20) and state.writer.wait_idle(20)
        text = scrape(client)
        controls = state.monitors[1].status()["controls"]  # by annotator id, as /status has it before naming
    accuracy = series(text, "ls_agreement_annotator_accuracy", "control", "annotator")
    counts = series(text, "ls_agreement_annotators", "control")
    shown = [control for control, c in controls.items() if c.get("consensus", {}).get("accuracy")]
    assert "sentiment" in shown
    for control in shown:
        estimated = controls[control]["consensus"]["accuracy"]
        assert counts[(control, )] == len(estimated) == 30
        mine = {who: value for (c, who), value in accuracy.items() if c == control}
        assert len(mine) == 4
        lowest = sorted(estimated.items(), key=lambda entry: (entry[1], entry[0]))[:4]
        assert mine == dict(lowest)
    assert len(accuracy) == 4 * len(shown)


def test_a_scrape_of_an_untouched_project_computes_no_summary(fake, monkeypatch):
    calls = []
    summary = ProjectState.live_summary

    def counted(self):
        calls.append(self.project)
        return summary(self)

    app, state = running(fake)
    with TestClient(app) as client:
        assert state.wait_ready(10) and state.writer.wait_idle(10)
        monkeypatch.setattr(ProjectState, "live_summary", counted)
        first = scrape(client)
        assert len(calls) == 1
        assert scrape(client) == first and len(calls) == 1
        fake.annotate(5, annotation(800, 5, 9, "neu"))
        client.post("/webhook", json=created(5, 800), headers=HEADER)
        settle(state)
        text, status = scrape(client), status_of(client)
        assert len(calls) == 3  # the scrape after the change, and /status
        assert series(text, "ls_agreement_annotations", "control")[("sentiment", )] == \
            status["projects"]["1"]["controls"]["sentiment"]["n_annotations"]
        assert series(text, "ls_agreement_agreement", "control", "measure") == {
            (name, measure): value for name, control in status["projects"]["1"]["controls"].items()
            for measure, value in live_values(control).items()}


def test_metrics_annotators_is_a_count():
    assert settings().metrics_annotators == 10
    assert settings(metrics_annotators=0).metrics_annotators == 0
    with pytest.raises(SettingsError):
        settings(metrics_annotators=-1)


# --- events and passes ---

def test_histograms_count_the_events_and_status_shows_where_the_time_goes(fake):
    app, state = running(fake)
    with TestClient(app) as client:
        assert state.wait_ready(10) and state.writer.wait_idle(10)
        before = series(scrape(client), "ls_agreement_event_to_meta_seconds_count")
        assert before == {}  # the first pass's writes are no event's
        for task in (2, 6, 9, 11):
            fake.annotate(task, annotation(1000 + task, task, 9, "neg"))
            assert client.post("/webhook", json=created(task, 1000 + task), headers=HEADER).status_code == 200
        settle(state)
        text, status = scrape(client), status_of(client)
    latency = status["projects"]["1"]["event_latency_ms"]
    assert set(latency) == {"queue", "read", "scoring", "write", "total"}
    for part, name in (("total", "event_to_meta"), ("queue", "event_queue"), ("read", "event_read"),
                       ("scoring", "event_scoring"), ("write", "event_write")):
        assert series(text, f"ls_agreement_{name}_seconds_count") == {(): 4}
        assert latency[part]["n"] == 4 and latency[part]["p50"] <= latency[part]["p95"]
        buckets = series(text, f"ls_agreement_{name}_seconds_bucket", "le")
        assert buckets[("+Inf", )] == 4 and list(buckets.values()) == sorted(buckets.values())
        assert [float(le) for le, in buckets][:-1] == [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    sums = {part: series(text, f"ls_agreement_event_{part}_seconds_sum")[()]
            for part in ("queue", "read", "scoring", "write")}
    total = series(text, "ls_agreement_event_to_meta_seconds_sum")[()]
    assert all(value >= 0 for value in sums.values()) and sum(sums.values()) <= total + 1e-6
    assert sums["queue"] >= 4 * state.settings.coalesce_seconds  # each event waited its coalescing at least
    assert latency["total"]["p95"] >= latency["queue"]["p50"]
    assert "write_latency_ms" in status and "merge_window_ms" in status["projects"]["1"]  # kept as they were


def test_passes_are_counted_by_kind_and_timed(fake):
    app, state = running(fake, full_pass_every=2)
    with TestClient(app) as client:
        assert state.wait_ready(10)
        monitor = state.monitors[1]
        for _ in range(2):
            passes = monitor.passes
            state.request_pass(1)
            assert wait_for(lambda passes=passes: monitor.passes == passes + 1)
        assert wait_for(lambda: sum(series(scrape(client), "ls_agreement_passes_total", "kind").values()) == 3)
        text = scrape(client)
    assert series(text, "ls_agreement_passes_total", "kind") == {("full", ): 2, ("changed", ): 1}
    assert series(text, "ls_agreement_pass_duration_seconds_count") == {(): 3}
    ended = series(text, "ls_agreement_last_pass_timestamp_seconds")[()]
    assert time.time() - 60 < ended <= time.time()


def test_owned_and_seen_projects_with_shards(fake):
    for project_id in (2, 3, 4):
        fake.add_project(project_id, [{"id": project_id * 100, "meta": {}, "annotations": []}])
    app, state = running(fake, projects=(), all_projects=True, discover_interval=0.2, shard=(2, 2))
    with TestClient(app) as client:
        assert wait_for(lambda: state.projects() == [2, 4]) and state.wait_ready(10)
        text = scrape(client)
        assert series(text, "ls_agreement_project_owned", "project", project=None) == {("2", ): 1, ("4", ): 1}
        assert series(text, "ls_agreement_project_seen", "project", project=None) == {
            (str(p), ): 1 for p in (1, 2, 3, 4)}
        assert series(text, "ls_agreement_shard_info", "shard", "shards") == {("2", "2"): 1}
        assert series(text, "ls_agreement_tasks", "project", project=None) == {("2", ): 1, ("4", ): 1}
        fake.delete_project(4)
        assert wait_for(lambda: state.projects() == [2])
        text = scrape(client)
    for name in ("ls_agreement_project_owned", "ls_agreement_tasks", "ls_agreement_passes_total",
                 "ls_agreement_pass_duration_seconds_count", "ls_agreement_last_pass_timestamp_seconds"):
        assert projects_in(text, name) == {"2"}, name
    assert series(text, "ls_agreement_project_seen", "project", project=None) == {(str(p), ): 1 for p in (1, 2, 3)}
