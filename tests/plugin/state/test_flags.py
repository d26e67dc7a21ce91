"""Flags that mean something: any control below its threshold, distance-aware for ordered labels, in words that name
what the annotators gave."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from tests.profiles import examples

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
    assert score.flagged and score.reasons == ("sentiment: pos by 1, neg by 1 (agreement 0.00 below 0.50)",)


def test_a_rating_of_4_against_5_is_near_agreement_and_1_against_5_is_not():
    near = scored([annotation(1, 1, "pos", 4), annotation(2, 2, "pos", 5)])
    # Ordinal weights on 1..5 (Gwet 2014): 1 - C(2,2) / C(5,2) = 0.9 for neighbours.
    assert near.controls["quality"]["spa"] == 0.0 and near.controls["quality"]["agreement"] == pytest.approx(0.9)
    assert not near.flagged
    far = scored([annotation(1, 1, "pos", 1), annotation(2, 2, "pos", 5)])
    assert far.controls["quality"]["agreement"] == 0.0
    assert far.flagged and far.reasons == ("quality: 1, 5 (weighted agreement 0.00 below 0.50)",)


def test_every_rule_that_fires_is_named_and_controls_can_have_their_own_threshold():
    both = scored([annotation(1, 1, "pos", 1), annotation(2, 2, "neg", 5)])
    assert both.reasons == ("quality: 1, 5 (weighted agreement 0.00 below 0.50)",
                            "sentiment: pos by 1, neg by 1 (agreement 0.00 below 0.50)")
    lenient = scored([annotation(1, 1, "pos", 3), annotation(2, 2, "pos", 5)], thresholds={"quality": 0.2})
    # 3 against 5: 1 - C(3,2) / C(5,2) = 0.7; below the default 0.5? no; strict threshold 0.8 flags it.
    assert lenient.controls["quality"]["agreement"] == pytest.approx(0.7) and not lenient.flagged
    strict = scored([annotation(1, 1, "pos", 3), annotation(2, 2, "pos", 5)], thresholds={"quality": 0.8})
    assert strict.reasons == ("quality: 3, 5 (weighted agreement 0.70 below 0.80)",)


def test_a_reason_names_each_label_and_how_many_annotators_chose_it_the_most_chosen_first():
    three = scored([annotation(1, 1, "pos", 5), annotation(2, 2, "neg", 1), annotation(3, 3, "neg", 1)])
    assert three.reasons == ("quality: 1, 1, 5 (weighted agreement 0.33 below 0.50)",
                             "sentiment: neg by 2, pos by 1 (agreement 0.33 below 0.50)")


def test_a_single_annotation_never_flags():
    assert not scored([annotation(1, 1, "pos", 1)]).flagged


def test_the_mirrored_score_is_the_lowest_control_agreement_and_merges_into_data():
    from plugin.state.blocks import Write, mirrored_score, task_score

    block = {"controls": {"sentiment": {"spa": 1.0}, "quality": {"spa": 0.0, "agreement": 0.9},
                          "topic": {"spa": None}}}
    assert task_score(block) == 0.9
    assert task_score({"controls": {}}) is None
    # mirrored: the score, then no consensus (as certain: 100 hundredths) and 3 annotations after its 3 decimals
    assert mirrored_score({**block, "n_annotations": 3}) == 0.90010003 and round(0.90010003, 3) == 0.9
    assert mirrored_score({"controls": {}, "n_annotations": 3}) is None
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


@pytest.mark.parametrize("opt_in", [False, True])
def test_a_multiple_choice_item_in_class_2_flags_only_when_asked_though_its_yes_no_agreement_passes(opt_in):
    # Rosenberg & Binkowski 2004, section 6: two annotators agree on tasks 1 and 2; on task 3 one ticks "quality", the
    # other "delivery" then "staff". Task 3's kappa' is low at p = 1 and at p = 0.5 alike (class 2, "constant low");
    # over its eight yes/no items they still agree on five ("no" to the rest), so SPA (0.625) passes 0.5. By
    # default that flags nothing: a reviewer reads the agreement; --flag-constant-low asks for the class too.
    state = ProjectState(1, parse_label_config(MULTI), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20, flag_constant_low=opt_in))
    state.set_task({"id": 1, "project": 1, "annotations": [topics(1, 1, "price"), topics(2, 2, "price")]})
    state.set_task({"id": 2, "project": 1, "annotations": [topics(3, 1, "service"), topics(4, 2, "service")]})
    state.set_task({"id": 3, "project": 1, "annotations": [topics(5, 1, "quality"),
                                                           topics(6, 2, "delivery", "staff")]})
    scores = state.task_scores()
    assert scores[3].controls["topics"]["spa"] == pytest.approx(5 / 8)
    assert scores[3].controls["topics"]["item_class"] == "constant low"
    assert scores[3].flagged == opt_in
    assert scores[3].reasons == (("topics: quality by 1 of 2, delivery by 1 of 2, staff by 1 of 2; annotators "
                                  "disagree on most labels whichever comes first",) if opt_in else ())
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


def test_tasks_of_equal_scores_but_other_labels_each_get_their_own_words():
    # Tasks 1 and 2 hold the same score columns (two of eight yes/no items split); their reasons name other labels.
    # Tasks 1 and 3 split the same labels by other annotators: the same words.
    state = ProjectState(1, parse_label_config(MULTI), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20, threshold=0.8, consensus="off"))
    state.set_task({"id": 1, "project": 1, "annotations": [topics(1, 1, "price"), topics(2, 2, "service")]})
    state.set_task({"id": 2, "project": 1, "annotations": [topics(3, 1, "quality"), topics(4, 2, "delivery")]})
    state.set_task({"id": 3, "project": 1, "annotations": [topics(5, 3, "service"), topics(6, 4, "price")]})
    scores = state.task_scores()
    assert scores[1].controls == scores[2].controls
    assert scores[1].reasons == ("topics: price by 1 of 2, service by 1 of 2 (agreement 0.75 below 0.80)",)
    assert scores[2].reasons == ("topics: quality by 1 of 2, delivery by 1 of 2 (agreement 0.75 below 0.80)",)
    assert scores[3].reasons == scores[1].reasons
    assert scores.reason_texts().tolist() == ["; ".join(scores[t].reasons) for t in (1, 2, 3)]
    codes, _ = scores.score_codes()  # the blocks a pass shares: tasks 1 and 2 differ
    assert codes[0] != codes[1]
    blocks = state.blocks(updated_at="now")
    assert [blocks[t]["reasons"] for t in (1, 2, 3)] == [list(scores[t].reasons) for t in (1, 2, 3)]


REGIONS = """<View><Text name="text" value="$text"/>
<Labels name="ner" toName="text"><Label value="PER"/><Label value="ORG"/></Labels></View>"""


def spans(identifier, who, *marks):
    return {"id": identifier, "completed_by": who, "updated_at": "2026-01-01T00:00:00Z",
            "result": [{"from_name": "ner", "to_name": "text", "type": "labels", "id": f"{identifier}-{start}",
                        "value": {"start": start, "end": end, "labels": [label]}} for start, end, label in marks]}


def test_a_span_control_says_how_many_spans_matched_and_on_aligned_items_which_labels_each_got():
    task = {"id": 1, "project": 1, "data": {"text": "Alice met Bob at Acme."}, "annotations": [
        spans(1, 1, (0, 5, "PER"), (10, 13, "PER")), spans(2, 2, (0, 5, "PER"), (10, 13, "ORG")),
        spans(3, 3, (0, 5, "PER"), (17, 21, "ORG"))]}
    state = ProjectState(1, parse_label_config(REGIONS), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20, threshold=0.8, consensus="off"))
    state.set_task(task)
    score = state.task_scores()[1]
    f1 = score.controls["ner"]["f1_overlap"]
    # pairs 1-2 and 1-3 match Alice alone (2 of 4 spans each), 2-3 too: 6 of 12 spans over three pairs
    assert score.reasons == (f"ner: 6 of 12 spans matched between 3 pairs of annotators (overlap F1 {f1:.2f} below "
                             "0.80)",)
    items = ProjectState(1, parse_label_config(REGIONS), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=20, threshold=0.8, consensus="off", span_flag_on="items"))
    items.set_task(task)
    spa = items.task_scores()[1].controls["ner"]["spa"]
    # the aligned items where the annotators differ, each with its labels (the one all agree on is not named)
    assert items.task_scores()[1].reasons == (f"ner: 10-13: PER by 1, ORG by 1, no span by 1; 17-21: no span by 2, "
                                              f"ORG by 1 (agreement {spa:.2f} below 0.80)",)


def test_an_uncertain_consensus_says_what_the_annotators_gave_then_the_posterior():
    from plugin.state.flags import reason_words
    from plugin.state.given import Given

    scores = {"sentiment": {"spa": 1.0, "consensus": {"label": "pos", "posterior": 0.62}}}
    given = {"sentiment": Given(items=(("", (("pos", 2),)),))}
    assert reason_words(scores, {"sentiment": (False, False, True)}, limits={"sentiment": 0.5}, min_posterior=0.9,
                        given=given) == ("sentiment: pos by 2; consensus uncertain, posterior 0.62 below 0.90",)
    # several rules on one control name its labels once; a rating's values in order; the decile's own words
    rated = {"quality": {"spa": 0.0, "agreement": 0.0, "consensus": {"label": 1, "posterior": 0.55}}}
    both = reason_words(rated, {"quality": (True, False, True)},
                        limits={"quality": 0.5}, min_posterior=0.9,
                        given={"quality": Given(items=(("", ((5, 1), (1, 1))),))}, decile=(0.0, 0.2))
    assert both == ("quality: 1, 5 (weighted agreement 0.00 below 0.50)",
                    "quality: consensus uncertain, posterior 0.55 below 0.90",
                    "score 0.00 in the project's lowest tenth (below 0.20)")


def test_constant_low_is_asked_for_by_flag_or_settings_file_and_the_help_states_the_whole_rule(tmp_path, capsys):
    from plugin.cli import _options, build_parser
    from plugin.project_settings import read_project_settings
    from plugin.settings import ProjectOptions

    parser = build_parser()
    base = ["sync", "--export", "x.json"]
    assert _options(parser.parse_args(base))[1].flag_constant_low is False
    assert _options(parser.parse_args([*base, "--flag-constant-low"]))[1].flag_constant_low is True
    path = tmp_path / "settings.toml"
    path.write_text("[projects.3]\nflag_constant_low = true\n")
    held = read_project_settings(path, base=ProjectOptions())
    assert held.for_project(3).scoring.flag_constant_low and not held.for_project(4).scoring.flag_constant_low
    with pytest.raises(SystemExit):
        parser.parse_args(["sync", "--help"])
    words = " ".join(capsys.readouterr().out.split())
    assert ("that is the whole rule unless --flag-on, --flag-lowest-decile or --flag-constant-low adds another"
            in words)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(st.one_of(st.floats(-1, 1), st.sampled_from([0.0, 0.0005, 0.4995, 1 / 3, -0.0005])),
                          st.one_of(st.none(), st.floats(0, 1), st.sampled_from([0.005, 0.625, 0.015])),
                          st.integers(0, 150)), min_size=1, max_size=20))
def test_one_task_s_review_key_is_the_one_every_task_s_column_gives_and_sorts_the_queue(rows):
    # the key a pass mirrors (review_key, one task) equals the report's (review_keys, every task) bit for bit, and
    # orders tasks by score to 3 decimals, then posterior in hundredths (none: certain), then annotations (to 99)
    from plugin.state.flags import review_key, review_keys

    scores, posteriors, annotations = (np.array([r[0] for r in rows]), np.array([np.nan if r[1] is None else r[1]
                                                                                 for r in rows]),
                                       np.array([r[2] for r in rows]))
    column = review_keys(scores, posteriors, annotations)
    one = [review_key({"c": {"spa": s, **({"consensus": {"posterior": p}} if p is not None else {})}}, n)
           for s, p, n in rows]
    assert column.tolist() == one
    # read to 3 decimals, the score (rounded as numpy rounds: halves to even)
    assert all(abs(key - round(s * 1000) / 1000) < 0.0002 for key, (s, _, _) in zip(one, rows, strict=True))
    parts = [(round(s * 1000), round((1.0 if p is None else p) * 100), min(n, 99)) for s, p, n in rows]
    assert sorted(range(len(rows)), key=lambda i: (one[i], i)) == sorted(range(len(rows)), key=lambda i: (parts[i], i))
