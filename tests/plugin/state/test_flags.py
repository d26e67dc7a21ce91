"""Flags that mean something: any control below its threshold, distance-aware for ordered labels."""

import numpy as np
import pytest

from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices>
<Choices name="topic" toName="text"><Choice value="a"/><Choice value="b"/></Choices>
<Choices name="lang" toName="text"><Choice value="en"/><Choice value="de"/></Choices>
<Rating name="quality" toName="text" maxRating="5"/></View>"""


def annotation(identifier, who, sentiment, rating, topic="a", lang="en"):
    return {"id": identifier, "completed_by": who, "updated_at": "2026-01-01T00:00:00Z", "result": [
        {"from_name": "sentiment", "type": "choices", "value": {"choices": [sentiment]}},
        {"from_name": "topic", "type": "choices", "value": {"choices": [topic]}},
        {"from_name": "lang", "type": "choices", "value": {"choices": [lang]}},
        {"from_name": "quality", "type": "rating", "value": {"rating": rating}}]}


def scored(annotations, **options):
    state = ProjectState(1, parse_label_config(CONFIG), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20, **options))
    state.set_task({"id": 1, "project": 1, "annotations": annotations})
    return state.task_scores()[1]


def test_one_control_in_full_disagreement_flags_though_the_mean_is_high():
    score = scored([annotation(1, 1, "pos", 4), annotation(2, 2, "neg", 4)])
    # Mean SPA over the controls is 0.75 (1, 1, 1, 0): the old mean rule let this task pass.
    assert score.spa == pytest.approx(0.75)
    assert score.flagged and score.reasons == ("sentiment: agreement 0.00 below 0.50",)


def test_a_rating_of_4_against_5_is_near_agreement_and_1_against_5_is_not():
    near = scored([annotation(1, 1, "pos", 4), annotation(2, 2, "pos", 5)])
    # Ordinal weights on 1..5 (Gwet 2014): 1 - C(2,2) / C(5,2) = 0.9 for neighbours.
    assert near.controls["quality"]["spa"] == 0.0 and near.controls["quality"]["agreement"] == pytest.approx(0.9)
    assert not near.flagged
    far = scored([annotation(1, 1, "pos", 1), annotation(2, 2, "pos", 5)])
    assert far.controls["quality"]["agreement"] == 0.0
    assert far.flagged and far.reasons == ("quality: weighted agreement 0.00 below 0.50",)


def test_every_rule_that_fires_is_named_and_controls_can_have_their_own_threshold():
    both = scored([annotation(1, 1, "pos", 1), annotation(2, 2, "neg", 5)])
    assert both.reasons == ("quality: weighted agreement 0.00 below 0.50", "sentiment: agreement 0.00 below 0.50")
    lenient = scored([annotation(1, 1, "pos", 3), annotation(2, 2, "pos", 5)], thresholds={"quality": 0.2})
    # 3 against 5: 1 - C(3,2) / C(5,2) = 0.7; below the default 0.5? no; strict threshold 0.8 flags it.
    assert lenient.controls["quality"]["agreement"] == pytest.approx(0.7) and not lenient.flagged
    strict = scored([annotation(1, 1, "pos", 3), annotation(2, 2, "pos", 5)], thresholds={"quality": 0.8})
    assert strict.reasons == ("quality: weighted agreement 0.70 below 0.80",)


def test_a_single_annotation_never_flags():
    assert not scored([annotation(1, 1, "pos", 1)]).flagged


def test_the_mirrored_score_is_the_lowest_control_agreement_and_merges_into_data():
    from plugin.state.blocks import Write, task_score

    block = {"controls": {"sentiment": {"spa": 1.0}, "quality": {"spa": 0.0, "agreement": 0.9},
                          "topic": {"spa": None}}}
    assert task_score(block) == 0.9
    assert task_score({"controls": {}}) is None
    mirror = Write(meta=None, mirror=True, score=0.9, overlap=None)
    assert mirror.data({"text": "x"}) == {"text": "x", "agreement_score": 0.9}
    assert Write(meta=None, mirror=True, score=None, overlap=None).data({"agreement_score": 0.5, "text": "x"}) == {
        "text": "x"}
    assert Write(meta=None, mirror=False, score=0.9, overlap=None).data({"text": "x"}) is None


MULTI = """<View><Text name="text" value="$text"/>
<Choices name="topics" toName="text" choice="multiple">
  <Choice value="price"/><Choice value="service"/><Choice value="quality"/><Choice value="delivery"/>
  <Choice value="staff"/>
  <Choice value="app"/><Choice value="returns"/><Choice value="warranty"/>
</Choices></View>"""


def topics(identifier, who, *choices):
    return {"id": identifier, "completed_by": who, "updated_at": "2026-01-01T00:00:00Z",
            "result": [{"from_name": "topics", "type": "choices", "value": {"choices": list(choices)}}]}


def test_a_multiple_choice_item_in_class_2_flags_though_its_yes_no_agreement_passes():
    # Rosenberg & Binkowski 2004, section 6: two annotators agree on tasks 1 and 2; on task 3 one ticks "quality", the
    # other "delivery" then "staff". Task 3's kappa' is low at p = 1 and at p = 0.5 alike (class 2, "constant low");
    # over its eight yes/no items they still agree on five ("no" to the rest), so SPA (0.625) passes 0.5.
    state = ProjectState(1, parse_label_config(MULTI), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20))
    state.set_task({"id": 1, "project": 1, "annotations": [topics(1, 1, "price"), topics(2, 2, "price")]})
    state.set_task({"id": 2, "project": 1, "annotations": [topics(3, 1, "service"), topics(4, 2, "service")]})
    state.set_task({"id": 3, "project": 1, "annotations": [topics(5, 1, "quality"),
                                                           topics(6, 2, "delivery", "staff")]})
    scores = state.task_scores()
    assert scores[3].controls["topics"]["spa"] == pytest.approx(5 / 8)
    assert scores[3].controls["topics"]["item_class"] == "constant low"
    assert scores[3].flagged
    assert scores[3].reasons == ("topics: low agreement whatever weight the first choice gets (constant low)",)
    assert scores[1].controls["topics"]["item_class"] == "constant high" and not scores[1].flagged


def test_the_lowest_decile_flags_the_worst_tenth_when_asked_and_holds_between_full_scorings():
    # Ten two-annotator tasks with ratings 1..5: task k has ratings (3, 3 + d_k); the weighted agreement falls with
    # |d_k|. Task 10 (1 against 5) is below the threshold anyway; with the decile rule the worst tenth is flagged too.
    state = ProjectState(1, parse_label_config(CONFIG), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20, lowest_decile=True, threshold=0.0))
    ratings = [(3, 3)] * 8 + [(2, 4), (1, 5)]
    for task, (a, b) in enumerate(ratings, start=1):
        state.set_task({"id": task, "project": 1, "annotations": [annotation(2 * task, 1, "pos", a),
                                                                  annotation(2 * task + 1, 2, "pos", b)]})
    scores = state.task_scores()
    agreement = {t: s.controls["quality"]["agreement"] for t, s in scores.items()}
    cut = float(np.quantile([min(s.controls[c].get("agreement", s.controls[c]["spa"]) for c in s.controls)
                             for s in scores.values()], 0.1))
    assert state.decile_cut == pytest.approx(cut)
    flagged = {t for t, s in scores.items() if s.flagged}
    assert flagged == {t for t in agreement if agreement[t] < cut} == {10}
    assert scores[10].reasons == (f"score {agreement[10]:.2f} in the project's lowest tenth (below {cut:.2f})",)
    # One task scored alone uses the cut of the last full scoring.
    state.set_task({"id": 1, "project": 1, "annotations": [annotation(2, 1, "pos", 1), annotation(3, 2, "pos", 5)]})
    assert state.task_scores([1])[1].flagged and state.decile_cut == pytest.approx(cut)
    off = scored([annotation(1, 1, "pos", 1), annotation(2, 2, "pos", 5)], threshold=0.0)
    assert not off.flagged


def test_item_classes_of_a_full_scoring_equal_those_of_tasks_scored_one_by_one():
    # A full scoring classifies every item at once (classify_items); a task scored alone uses the running pair sums.
    from plugin.demo import CONFIG as DEMO
    from plugin.demo import simulated_export

    state = ProjectState(None, parse_label_config(DEMO), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20))
    state.load(simulated_export(150, seed=2))
    every = state.task_scores()
    alone = {task: state.task_scores([task])[task] for task in every}
    classes = [every[t].controls["topics"].get("item_class") for t in every if "topics" in every[t].controls]
    assert {"constant high", "constant low"} <= set(classes)
    assert all(every[t].controls == alone[t].controls and every[t].reasons == alone[t].reasons for t in every)
    # a task named twice, or unknown, is scored once, as named alone
    some = list(every)[:3]
    twice = state.task_scores([some[0], *some, some[1], 10**9])
    assert list(twice) == some and twice == {t: every[t] for t in some}


def test_the_augmented_sums_follow_tasks_changed_and_stay_as_they_are_for_tasks_read_again():
    # Every pass reads every task again: one read as it was leaves the running pair sums exactly as they were; one
    # changed moves them to what a fresh read of the project gives (the classes of tasks scored one by one).
    import copy

    from plugin.demo import CONFIG as DEMO
    from plugin.demo import simulated_export

    tasks = simulated_export(60, seed=5)
    state = ProjectState(None, parse_label_config(DEMO), mapping=MappingOptions(), scoring=ScoringOptions())
    state.load(tasks)
    held = copy.deepcopy(state.controls["topics"].augmented)
    for task in tasks:
        state.set_task(task)
    assert state.controls["topics"].augmented.__dict__ == held.__dict__
    changed = copy.deepcopy(tasks)
    for task in changed[::3]:
        for annotation in task["annotations"][:1]:
            annotation["result"] = [r for r in annotation["result"] if r["from_name"] != "topics"]
    for task in changed:
        state.set_task(task)
    fresh = ProjectState(None, parse_label_config(DEMO), mapping=MappingOptions(), scoring=ScoringOptions())
    fresh.load(changed)
    one_by_one = {t: state.task_scores([t])[t].controls.get("topics", {}).get("item_class") for t in state.tasks}
    assert one_by_one == {t: fresh.task_scores([t])[t].controls.get("topics", {}).get("item_class")
                          for t in fresh.tasks}
    assert sum(c is not None for c in one_by_one.values()) > 20
