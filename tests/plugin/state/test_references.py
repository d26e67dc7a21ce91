"""References: ground truth and model predictions read from tasks, mapped with the annotations, and scored."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from plugin.mapping.annotations import Skips
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from plugin.state.references import GROUND_TRUTH, model_key, task_references
from tests.profiles import examples

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/><Choice value="neu"/></Choices>
<Rating name="quality" toName="text" maxRating="5"/></View>"""


def _result(label=None, rating=None):
    out = []
    if label is not None:
        out.append({"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [label]}})
    if rating is not None:
        out.append({"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": rating}})
    return out


def _annotation(identifier, who, label=None, rating=None, **extra):
    return {"id": identifier, "completed_by": who, "was_cancelled": False, "ground_truth": False,
            "created_at": "2026-01-05T09:00:00Z", "updated_at": "2026-01-05T09:00:00Z", "updated_by": who,
            "result": _result(label, rating), **extra}


def _prediction(identifier, version, label=None, rating=None, created_at="2026-01-04T09:00:00Z"):
    return {"id": identifier, "model_version": version, "created_at": created_at, "result": _result(label, rating)}


def _imported_truth(identifier, label=None, rating=None):
    # Imported with the task: updated_by is present and empty (see plugin.mapping.annotations).
    return {**_annotation(identifier, 1, label, rating), "ground_truth": True, "updated_by": None}


def _state(tasks, **scoring):
    state = ProjectState(None, parse_label_config(CONFIG), mapping=MappingOptions(),
                         scoring=ScoringOptions(**scoring))
    state.load(tasks)
    return state


def test_which_ground_truth_and_which_predictions_count():
    skips = Skips()
    task = {"id": 3, "annotations": [
        {**_annotation(1, 7, "pos"), "ground_truth": True},  # marked by a reviewer on annotator 7's annotation
        {**_imported_truth(2, "neg")},
        {**_imported_truth(3, "neu"), "was_cancelled": True}],
        "predictions": [_prediction(10, "v1", "pos", created_at="2026-01-02T00:00:00Z"),
                        _prediction(11, "v1", "neg", created_at="2026-01-03T00:00:00Z"),
                        _prediction(12, None, "neu", created_at="2026-01-01T00:00:00Z"), "not a prediction",
                        {"id": 13, "model_version": "v2", "result": "broken"}]}
    refs = task_references(task, 3, skips)
    by_key = {s.annotator: s for s in refs.submissions}
    assert set(by_key) == {GROUND_TRUTH, model_key("v1"), model_key(None)}
    assert by_key[GROUND_TRUTH].annotation == 2  # the imported one is the reference; no author then
    assert refs.author is None
    assert by_key[model_key("v1")].annotation == 11  # the later prediction of v1
    assert model_key(None) == "ref:model:(no version)" and model_key(" v1 ") == model_key("v1")
    assert refs.latest_model == model_key("v1")  # 11 was created after 12
    assert skips.reasons == {"prediction that is not an object": 1, "prediction whose result is not a list": 1,
                             "older prediction of the same model version on a task (the latest counts)": 1}
    marked = task_references({"annotations": [{**_annotation(1, 7, "pos"), "ground_truth": True}]}, 3, Skips())
    assert marked.author == "7" and [s.annotator for s in marked.submissions] == [GROUND_TRUTH]


def _project():
    """Six tasks, annotators 1-3; ground truth imported on 1-3 and marked by a reviewer on annotator 1's annotation
    of task 4; model v1 predicts tasks 1-6, v2 tasks 5-6."""
    labels = {1: ("pos", "pos", "neg"), 2: ("neg", "neg", "neg"), 3: ("neu", "pos", "neu"),
              4: ("pos", "neg", "pos"), 5: ("neg", "neg", None), 6: ("pos", None, "neu")}
    truth = {1: "pos", 2: "neg", 3: "pos"}
    v1 = {1: "pos", 2: "neg", 3: "neu", 4: "pos", 5: "neg", 6: "neu"}
    v2 = {5: "pos", 6: "pos"}
    tasks = []
    for task, chosen in labels.items():
        annotations = [_annotation(task * 10 + who, who, label, rating=3 + (who == 2))
                       for who, label in enumerate(chosen, start=1) if label is not None]
        if task in truth:
            annotations.append(_imported_truth(task * 10 + 9, truth[task], rating=3))
        if task == 4:
            annotations[0]["ground_truth"] = True
        predictions = [_prediction(task * 100, "v1", v1[task], rating=3)]
        if task in v2:
            predictions.append(_prediction(task * 100 + 1, "v2", v2[task], created_at="2026-01-04T10:00:00Z"))
        tasks.append({"id": task, "data": {"text": f"t{task}"}, "meta": {}, "annotations": annotations,
                      "predictions": predictions})
    return tasks


def test_annotators_against_the_ground_truth_by_hand():
    state = _state(_project(), min_gt_accuracy=0.6, min_gt_items=3)
    block = state.scores().controls["sentiment"].summary()["references"]
    truth = {row["annotator"]: row for row in block["ground_truth"]["annotators"]}
    # Tasks 1-3 imported (pos, neg, pos) and task 4 marked on annotator 1's "pos", the reference for 2 and 3 only.
    # Annotator 1: pos, neg, neu on 1-3 -> 2 of 3. Annotator 2: pos, neg, pos, and neg on 4 -> 3 of 4.
    # Annotator 3: neg, neg, neu, and pos on 4 -> 2 of 4.
    assert {a: (r["n_items"], r["accuracy"]) for a, r in truth.items()} == {
        "1": (3, pytest.approx(2 / 3)), "2": (4, 0.75), "3": (4, 0.5)}
    assert truth["2"]["kappa"] == pytest.approx(cohen_kappa_score(["pos", "neg", "pos", "neg"],
                                                                  ["pos", "neg", "pos", "pos"]))
    assert block["ground_truth"]["below"] == ["3"] and block["ground_truth"]["n_tasks"] == 4
    low, high = truth["2"]["accuracy_low"], truth["2"]["accuracy_high"]
    assert 0 < low < 0.75 < high < 1
    # Per task: task 4's share leaves out its author (annotators 2 and 3: neg, pos against pos).
    scores = state.task_scores()
    assert scores[4].controls["sentiment"]["ground_truth"] == 0.5
    assert scores[3].controls["sentiment"]["ground_truth"] == pytest.approx(1 / 3)
    assert "ground_truth" not in scores[5].controls["sentiment"]


def test_model_versions_against_the_annotators_by_hand():
    state = _state(_project())
    models = state.scores().controls["sentiment"].summary()["references"]["models"]
    v1, v2 = models["v1"], models["v2"]
    assert (v1["n_tasks"], v2["n_tasks"]) == (6, 2)
    rows = {row["annotator"]: row for row in v1["annotators"]}
    # v1: pos, neg, neu, pos, neg, neu. Annotator 1: pos, neg, neu, pos, neg, pos -> 5 of 6.
    assert rows["1"]["accuracy"] == pytest.approx(5 / 6) and rows["1"]["n_items"] == 6
    assert rows["1"]["kappa"] == pytest.approx(cohen_kappa_score(["pos", "neg", "neu", "pos", "neg", "pos"],
                                                                 ["pos", "neg", "neu", "pos", "neg", "neu"]))
    # Annotator 1 with the others: task 1 (pos: pos, neg) 1 of 2, 2: 2 of 2, 3: 1 of 2, 4: 1 of 2, 5: 1 of 1,
    # 6: 0 of 1 -> 6 of 10.
    assert rows["1"]["with_others"] == pytest.approx(0.6) and rows["1"]["n_pairs"] == 10
    assert v1["kappa_mean"] == pytest.approx(sum(r["kappa"] for r in rows.values()) / 3, abs=1e-6)
    # The majority where there is one: 1 pos, 2 neg, 3 neu, 4 pos, 5 neg (task 6 ties): v1 agrees on all five.
    assert v1["majority"]["n_items"] == 5 and v1["majority"]["accuracy"] == 1.0
    assert {(c["model"], c["majority"]): c["n_items"] for c in v1["confusion"]} == {
        ("neg", "neg"): 2, ("neu", "neu"): 1, ("pos", "pos"): 2}
    assert v1["ratio"] == pytest.approx(v1["kappa_mean"] / v1["human_kappa_mean"], abs=1e-5)
    # Only tasks 5 and 6 for v2; per task, the latest version: v2 on 5 and 6, v1 elsewhere.
    assert {row["annotator"]: row["n_items"] for row in v2["annotators"]} == {"1": 2, "2": 1, "3": 1}
    scores = state.task_scores()
    assert scores[5].controls["sentiment"]["prediction"] == 0.0  # v2 says pos; both said neg
    assert scores[1].controls["sentiment"]["prediction"] == pytest.approx(2 / 3)


def test_ordered_controls_are_weighted_as_the_flags_and_pairwise_kappas():
    state = _state(_project())
    quality = state.scores().controls["quality"].summary()["references"]
    rows = {row["annotator"]: row for row in quality["ground_truth"]["annotators"]}
    # Annotator 2 rates 4 where the truth is 3: an exact accuracy of 0 but a high weighted agreement.
    assert rows["2"]["accuracy"] == 0.0 and rows["2"]["agreement"] > 0.8
    assert rows["1"]["accuracy"] == 1.0


def test_live_equals_batch_and_a_removed_prediction_drops_out():
    tasks = _project()
    batch = _state(tasks)
    live = _state([])
    order = list(tasks)
    random.Random(4).shuffle(order)
    for task in order:
        live.set_task(task)
    assert live.scores().controls["sentiment"].references == batch.scores().controls["sentiment"].references
    assert live.task_scores() == batch.task_scores()
    changed = dict(tasks[4], predictions=[])
    live.set_task(changed)
    models = live.scores().controls["sentiment"].references["models"]
    assert models["v1"]["n_tasks"] == 5 and models["v2"]["n_tasks"] == 1
    assert "prediction" not in live.task_scores()[5].controls["sentiment"]
    live.remove_task(1)
    assert live.scores().controls["sentiment"].references["ground_truth"]["n_tasks"] == 3


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["pos", "neg", "neu"]), st.sampled_from(["pos", "neg", "neu"])),
                min_size=2, max_size=12), st.integers(0, 10**6))
def test_an_annotator_identical_to_the_model_scores_one_and_names_change_nothing(labels, seed):
    def tasks(rename):
        return [{"id": i + 1, "data": {"text": "t"}, "annotations": [
            _annotation(10 * i + 1, rename(1), copy), _annotation(10 * i + 2, rename(2), other)],
            "predictions": [_prediction(100 + i, "m", copy)]} for i, (copy, other) in enumerate(labels)]

    first = _state(tasks(lambda who: who)).scores().controls["sentiment"].references["models"]["m"]
    rows = {row["annotator"]: row for row in first["annotators"]}
    assert rows["1"]["accuracy"] == 1.0
    if len({copy for copy, _ in labels}) > 1:
        assert rows["1"]["kappa"] == pytest.approx(1.0)
    offset = random.Random(seed).randint(100, 10**6)
    second = _state(tasks(lambda who: who + offset)).scores().controls["sentiment"].references["models"]["m"]
    strip = [{k: v for k, v in row.items() if k not in ("annotator", "name")} for row in first["annotators"]]
    assert strip == [{k: v for k, v in row.items() if k not in ("annotator", "name")}
                     for row in second["annotators"]]
    assert first["kappa_mean"] == second["kappa_mean"]


def test_the_report_shows_annotators_and_models_against_the_references(tmp_path):
    from plugin.report import build_report, write_report
    from plugin.report.page import render_html

    state = _state(_project(), min_gt_accuracy=0.6, min_gt_items=3)
    report = build_report(state.snapshot(), source="references", generated_at="2026-11-24 12:00 UTC",
                          people={"3": "Cy <cy@example.com>"})
    table = report.references.set_index(["control", "reference", "annotator"])
    assert table.loc[("sentiment", "ground truth", "2"), "accuracy"] == 0.75
    assert table.loc[("sentiment", "ground truth", "3"), "below_min"]
    assert table.loc[("sentiment", "model v1", "1"), "with_others"] == pytest.approx(0.6)
    models = report.models.set_index(["control", "model"])
    assert models.loc[("sentiment", "v1"), "majority_accuracy"] == 1.0
    assert models.loc[("sentiment", "v2"), "n_tasks"] == 2
    confusion = report.model_confusion
    v2 = confusion[(confusion["control"] == "sentiment") & (confusion["model"] == "v2")]
    assert v2[["model_label", "majority_label", "n_items"]].values.tolist() == [["pos", "neg", 1]]
    page = render_html(report)
    assert 'id="references"' in page and "Against references" in page
    assert "Below the least accuracy against the ground truth (0.60): Cy &lt;cy@example.com&gt; (sentiment)." in page
    written = write_report(report, tmp_path / "csv", format="csv")
    assert {"references", "models", "model_confusion"} <= {p.stem for p in written}
    plain = build_report(_state([dict(t, predictions=[], annotations=[a for a in t["annotations"]
                                                                      if not a.get("ground_truth")])
                                 for t in _project()]).snapshot(), source="none", generated_at="now")
    assert plain.references.empty and 'id="references"' not in render_html(plain)


LABEL = st.sampled_from(["pos", "neg", "neu"])


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.tuples(st.dictionaries(st.integers(1, 4), LABEL, min_size=1, max_size=3),
                          st.one_of(st.none(), LABEL), st.lists(st.tuples(st.sampled_from(["a", "b"]), LABEL),
                                                                max_size=3)), min_size=1, max_size=8),
       st.randoms(use_true_random=False))
def test_live_equals_batch_for_any_references(plan, rnd):
    tasks = []
    for index, (given_labels, truth, predictions) in enumerate(plan):
        task = index + 1
        annotations = [_annotation(task * 10 + who, who, label) for who, label in given_labels.items()]
        if truth is not None:
            annotations.append(_imported_truth(task * 10 + 9, truth))
        tasks.append({"id": task, "data": {"text": "t"}, "annotations": annotations, "predictions": [
            _prediction(task * 100 + k, version, label, created_at=f"2026-01-0{k + 1}T00:00:00Z")
            for k, (version, label) in enumerate(predictions)]})
    batch = _state(tasks)
    live = _state([])
    order = list(tasks) + [dict(t, predictions=[]) for t in rnd.sample(tasks, len(tasks) // 2)]
    rnd.shuffle(order)
    for task in order:  # some tasks lose their predictions on the way, then come back as read at the end
        live.set_task(task)
    for task in tasks:
        live.set_task(task)
    assert live.scores().controls["sentiment"].references == batch.scores().controls["sentiment"].references
    assert live.task_scores() == batch.task_scores()
