"""Live state after any stream of events equals a batch computation over the final annotations."""

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement import UndefinedMeasureWarning
from plugin.labelconfig import parse_label_config
from plugin.live import LiveProject
from plugin.settings import MappingOptions, ScoringOptions
from plugin.sync import score_tasks

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/><Choice value="neu"/></Choices>
<Choices name="topics" toName="text" choice="multiple"><Choice value="a"/><Choice value="b"/></Choices>
<Labels name="ner" toName="text"><Label value="PER"/><Label value="ORG"/></Labels>
<Rating name="quality" toName="text" maxRating="4"/>
<Number name="score" toName="text"/></View>"""
CONTROLS = parse_label_config(CONFIG)
SCORING = ScoringOptions(n_resamples=20)
SPANS = ((0, 5), (6, 10), (3, 8))


def annotation(rnd, identifier, task, annotator, version):
    result = []
    if rnd.random() < 0.9:
        result.append({"from_name": "sentiment", "type": "choices", "value": {"choices": [rnd.choice(["pos", "neg", "neu"])]}})
    result.append({"from_name": "topics", "type": "choices",
                   "value": {"choices": rnd.sample(["a", "b"], rnd.randint(0, 2))}})
    for start, end in SPANS:
        if rnd.random() < 0.5:
            result.append({"from_name": "ner", "type": "labels",
                           "value": {"start": start, "end": end, "labels": [rnd.choice(["PER", "ORG"])]}})
    result.append({"from_name": "quality", "type": "rating", "value": {"rating": rnd.randint(1, 4)}})
    result.append({"from_name": "score", "type": "number", "value": {"number": float(rnd.randint(0, 3))}})
    return {"id": identifier, "task": task, "completed_by": annotator, "result": result,
            "was_cancelled": rnd.random() < 0.1, "ground_truth": False, "updated_at": f"2026-01-01T00:00:{version:02d}Z"}


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False), st.integers(5, 40))
def test_live_equals_batch_after_a_random_stream(rnd, n_events):
    tasks = [1, 2, 3, 4]
    events, latest, deleted = [], {}, set()
    for version in range(n_events):
        kind = rnd.random()
        if kind < 0.75 or not latest:  # create or update
            identifier = rnd.randint(1, 12)
            old = latest.get(identifier)
            task = old["task"] if old else rnd.choice(tasks)
            annotator = old["completed_by"] if old else rnd.randint(1, 4)
            new = annotation(rnd, identifier, task, annotator, version)
            events.append(("upsert", new))
            if identifier not in deleted:
                latest[identifier] = new
        else:
            identifier = rnd.choice(sorted(latest))
            events.append(("delete", identifier))
            deleted.add(identifier)
            latest.pop(identifier, None)
    # Deliver with duplicates and some out of order (an update may arrive before an older version of itself).
    delivered = events + [e for e in events if rnd.random() < 0.3]
    for _ in range(len(delivered) // 3):
        i, j = sorted(rnd.sample(range(len(delivered)), 2)) if len(delivered) > 1 else (0, 0)
        if delivered[i][0] == delivered[j][0] == "upsert":
            delivered[i], delivered[j] = delivered[j], delivered[i]

    live = LiveProject(1, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    live.load([{"id": t, "meta": {}, "annotations": []} for t in tasks])
    for kind, payload in delivered:
        if kind == "upsert":
            live.apply_annotation(payload, payload["task"])
        else:
            live.delete_annotations([payload])

    final = [{"id": t, "meta": {}, "annotations": [a for a in latest.values() if a["task"] == t]} for t in tasks]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        batch = score_tasks(final, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
        status = live.status()
    for task in tasks:
        assert live.task_score(task) == batch.tasks[task], task
    for name, control in batch.controls.items():
        assert status[name]["spa"] == pytest.approx(control.spa, abs=1e-6)
        assert status[name]["alpha"] == pytest.approx(control.alpha, abs=1e-6)
        assert status[name]["n_items"] == control.n_items


def test_a_deleted_annotation_stays_deleted_and_stale_versions_are_ignored():
    live = LiveProject(1, CONTROLS, mapping=MappingOptions(), scoring=SCORING)
    first = {"id": 5, "completed_by": 1, "updated_at": "2026-01-01T00:00:02Z",
             "result": [{"from_name": "sentiment", "type": "choices", "value": {"choices": ["pos"]}}]}
    other = {**first, "id": 6, "completed_by": 2}
    assert live.apply_annotation(first, 9) == {9}
    live.apply_annotation(other, 9)
    assert live.task_score(9).controls["sentiment"]["spa"] == 1.0
    stale = {**other, "updated_at": "2026-01-01T00:00:01Z",
             "result": [{"from_name": "sentiment", "type": "choices", "value": {"choices": ["neg"]}}]}
    live.apply_annotation(stale, 9)
    assert live.task_score(9).controls["sentiment"]["spa"] == 1.0
    assert live.delete_annotations([6]) == {9}
    live.apply_annotation({**other, "updated_at": "2026-01-01T00:00:09Z"}, 9)
    assert live.task_score(9).n_annotations == 1
