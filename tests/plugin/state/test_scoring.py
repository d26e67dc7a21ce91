"""Task and project scores equal the statistics core computed independently."""

import krippendorff
import numpy as np
import pytest

from agreement import item_agreement, krippendorff_alpha, spa
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from tests.plugin.conftest import FIRST, SECOND, THIRD


@pytest.fixture(scope="module")
def scores(recorded):
    """The recorded project's scores, computed once: the tests only read them."""
    return ProjectState.from_tasks(recorded["tasks"], parse_label_config(recorded["label_config"]),
                                   mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=200)).scores()


def test_single_choice_scores(scores, submissions):
    first, *_ = sorted(submissions)
    sentiment = scores.controls["sentiment"]
    # Task 1: positive, positive, negative; task 2: neutral, negative, negative (columns positive, negative, neutral).
    counts = np.array([[2, 1, 0], [0, 2, 1]], dtype=float)
    assert sentiment.spa == pytest.approx(spa(counts))
    assert sentiment.alpha == pytest.approx(krippendorff.alpha(
        reliability_data=[[0, 2], [0, 1], [1, 1]], level_of_measurement="nominal"), abs=1e-6)
    assert scores.tasks[first].controls["sentiment"]["spa"] == pytest.approx(item_agreement(counts)[0])
    assert sentiment.n_items == 2 and sentiment.n_annotators == 3
    assert {tuple(p["annotators"]) for p in sentiment.pairs} == {(FIRST, SECOND), (FIRST, THIRD), (SECOND, THIRD)}


def test_task_alpha_is_scored_against_the_project_expected_disagreement(scores, submissions):
    first, *_ = sorted(submissions)
    # Rating: 4, 5, 4 on both tasks; ordinal. d_task / D_e with the project's marginals.
    quality = scores.controls["quality"]
    counts = np.array([[0, 0, 0, 2, 1], [0, 0, 0, 2, 1]], dtype=float)
    assert quality.alpha == pytest.approx(krippendorff_alpha(counts, level="ordinal", values=[1, 2, 3, 4, 5]))
    # Both tasks are alike, so each task's alpha term equals the project's alpha.
    assert scores.tasks[first].controls["quality"]["alpha"] == pytest.approx(quality.alpha)


def test_span_task_scores_average_over_the_task_items(scores, submissions):
    first, second, _ = sorted(submissions)
    ner = scores.controls["ner"]
    # Task 1 items: PER x3 (P=1), ORG ORG LOC (1/3), LOC + 2 no span (1/3); annotations_m1 weights are equal.
    assert scores.tasks[first].controls["ner"]["spa"] == pytest.approx((1 + 1 / 3 + 1 / 3) / 3)
    assert scores.tasks[first].controls["ner"]["n_items"] == 3
    assert scores.tasks[second].controls["ner"]["spa"] == pytest.approx((1 + 1 / 3) / 2)
    assert ner.spa == pytest.approx((1 + 1 / 3 + 1 / 3 + 1 + 1 / 3) / 5)


def test_multiple_choices_report_augmented_kappa_and_per_label_agreement(scores):
    topics = scores.controls["topics"]
    assert set(topics.augmented["kappa"]) == {"1.0", "0.9", "0.8", "0.7", "0.6", "0.5"}
    assert topics.labels["sports"]["spa"] == 1.0  # everyone said yes to sports on both tasks
    assert topics.labels["politics"]["spa"] == pytest.approx(1 / 3)


def test_flags_and_reasons(recorded, controls, submissions):
    first, _, third = sorted(submissions)
    scores = ProjectState.from_tasks(recorded["tasks"], controls, mapping=MappingOptions(),
                                     scoring=ScoringOptions(threshold=0.75, n_resamples=100)).scores()
    task = scores.tasks[first]
    assert task.flagged and task.n_annotations == 3
    assert "sentiment: positive by 2, negative by 1 (agreement 0.33 below 0.75)" in task.reasons
    assert not scores.tasks[third].flagged and scores.tasks[third].spa is None
    assert scores.tasks[third].n_annotations == 0


def test_project_interval_brackets_spa(scores):
    low, high = scores.controls["ner"].spa_ci
    assert low <= scores.controls["ner"].spa <= high


def test_free_text_with_thousands_of_answers_stays_within_a_few_count_matrices():
    # 1,500 tasks, three annotators, 3,000 distinct answers: a labels x labels table per annotator pair (or an
    # identity matrix for AC1) would take 72 MB each; the scores must stay within a few items x labels matrices.
    import tracemalloc

    from plugin.mapping.labelconfig import parse_label_config
    from plugin.state.project import ProjectState

    config = '<View><Text name="text" value="$text"/><TextArea name="answer" toName="text"/></View>'
    tasks = [{"id": i, "data": {"text": "x"}, "annotations": [
        {"id": 10 * i + who, "completed_by": who, "result": [
            {"from_name": "answer", "to_name": "text", "type": "textarea",
             "value": {"text": [f"answer {i} {who % 2}"]}}]} for who in (1, 2, 3)]} for i in range(1500)]
    state = ProjectState(None, parse_label_config(config), mapping=MappingOptions(),
                         scoring=ScoringOptions(n_resamples=50))
    state.load(tasks)
    tracemalloc.start()
    try:
        scores = state.scores()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    matrix = 1500 * 3000 * 8
    assert peak < 4 * matrix
    control = scores.controls["answer"]
    # Annotators 1 and 3 always give the same answer, 2 another: the pairs say so exactly.
    pairs = {tuple(p["annotators"]): p for p in control.pairs}
    assert pairs[("1", "3")]["n_items"] == 1500 and pairs[("1", "3")]["cohen"] == pytest.approx(1.0)
    # 1 and 2 never share an answer and no answer recurs: P(A) = P(E) = 0, so kappa is 0.
    assert pairs[("1", "2")]["cohen"] == 0.0 and control.spa == pytest.approx(1 / 3)
    assert control.gwet["coefficient"] == "AC1"


def _free_text_state(n_tasks, *, answers):
    """Free text on ``n_tasks`` tasks, three annotators choosing among ``answers`` (some missing an item)."""
    import random

    from plugin.mapping.labelconfig import parse_label_config

    rnd = random.Random(n_tasks)
    config = '<View><Text name="text" value="$text"/><TextArea name="answer" toName="text"/></View>'
    tasks = [{"id": i, "data": {"text": "x"}, "annotations": [
        {"id": 10 * i + who, "completed_by": who, "created_at": f"2026-01-05T{who:02d}:{i % 60:02d}:00Z",
         "result": [{"from_name": "answer", "to_name": "text", "type": "textarea",
                     "value": {"text": [f"answer {rnd.randrange(answers)}"]}}]}
        for who in (1, 2, 3) if rnd.random() < 0.85]} for i in range(1, n_tasks + 1)]
    return ProjectState.from_tasks(tasks, parse_label_config(config), mapping=MappingOptions(),
                                   scoring=ScoringOptions(n_resamples=50))


def test_a_control_too_wide_for_a_count_matrix_is_scored_from_sparse_counts_with_the_same_values():
    """Past WIDE_CELLS (here lowered to 0), SPA, its interval, alpha, AC1, Fleiss, the pairs and the annotators are
    those of the count matrix; what needs a table over the labels is left out and said."""
    from unittest.mock import patch

    from plugin.report import build_report
    from plugin.summary import summary_text, sync_summary

    state = _free_text_state(60, answers=5)
    snapshot = state.snapshot()
    dense = snapshot.scores().controls["answer"]
    report = build_report(snapshot, source="test", generated_at="now")
    with patch("plugin.state.scoring.WIDE_CELLS", 0), patch("agreement.timeline.WIDE_CELLS", 0):
        wide_scores = snapshot.scores()
        wide = wide_scores.controls["answer"]
        wide_report = build_report(snapshot, source="test", generated_at="now")
    text = summary_text(sync_summary("test", wide_scores, ScoringOptions(), dry_run=True, to_write=0))
    assert f"Control 'answer': {wide.notes[0]}" in text.splitlines()
    assert dense.notes == () and dense.confusions and dense.label_agreement
    assert (wide.spa, wide.spa_ci, wide.n_items, wide.n_pairable_items, wide.n_annotations) == (
        dense.spa, dense.spa_ci, dense.n_items, dense.n_pairable_items, dense.n_annotations)
    for key in ("alpha", "fleiss"):
        assert getattr(wide, key) == pytest.approx(getattr(dense, key), abs=1e-6)
    assert wide.gwet["value"] == pytest.approx(dense.gwet["value"], abs=1e-6) and wide.gwet["ci"] == [None, None]
    assert wide.pairs == dense.pairs and wide.annotators == dense.annotators
    assert wide.confusions == [] and wide.label_agreement is None
    assert wide.notes and "5 distinct labels on 60 items" in wide.notes[0]
    assert wide.summary()["notes"] == list(wide.notes) and "notes" not in dense.summary()
    timeline, wide_timeline = report.timeline, wide_report.timeline
    assert len(timeline) == len(wide_timeline) > 1
    for column in ("n_labels", "n_items", "spa", "spa_low", "spa_high", "alpha"):
        assert wide_timeline[column].to_numpy() == pytest.approx(timeline[column].to_numpy(), abs=1e-9,
                                                                 nan_ok=True), column
    assert wide.notes[0] in wide_report.notes["message"].tolist()


def test_free_text_past_a_count_matrix_is_scored_in_memory_of_its_annotations():
    """20,000 items with 30,000 distinct answers: a count matrix would take 4.8 GB; the scores and the report take
    a few MB."""
    import tracemalloc

    from plugin.report import build_report

    state = _free_text_state(20_000, answers=30_000)
    tracemalloc.start()
    try:
        snapshot = state.snapshot()
        control = snapshot.scores().controls["answer"]
        report = build_report(snapshot, source="test", generated_at="now")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert control.notes and 0.0 <= control.spa < 0.01 and control.alpha == pytest.approx(0.0, abs=0.01)
    assert peak < 400 * 2**20 and len(report.timeline) > 1


def test_scores_from_the_codes_equal_scores_from_the_tables(recorded, controls):
    """A full scoring reads the rows as codes; a report's tables of the same rows give the same scores."""
    import json
    from dataclasses import replace

    from plugin.state.scoring import score_control

    state = ProjectState.from_tasks(recorded["tasks"], controls, mapping=MappingOptions(),
                                    scoring=ScoringOptions(n_resamples=200))
    snapshot = state.snapshot()
    assert all(mapped.coded is not None for mapped in snapshot.mapped.values())
    compared = 0
    for name, mapped in snapshot.mapped.items():
        tabled = replace(mapped, coded=None)  # the rows decoded into words, as a report reads them
        if not tabled.n_rows:
            continue
        coded_score = score_control(mapped, snapshot.scoring, expected=snapshot.expected.get(name),
                                    observed=snapshot.observed.get(name), f1_counts=snapshot.span_f1.get(name))
        table_score = score_control(tabled, snapshot.scoring, expected=snapshot.expected.get(name),
                                    observed=snapshot.observed.get(name), f1_counts=snapshot.span_f1.get(name))
        assert json.dumps(coded_score.summary(), sort_keys=True) == json.dumps(table_score.summary(), sort_keys=True)
        compared += 1
    assert compared >= 3
