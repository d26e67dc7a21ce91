"""Task and project scores equal the statistics core computed independently."""

import krippendorff
import numpy as np
import pytest

from agreement import item_agreement, krippendorff_alpha, spa
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state import ProjectState
from tests.plugin.conftest import FIRST, SECOND, THIRD


@pytest.fixture
def scores(recorded, controls):
    return ProjectState.from_tasks(recorded["tasks"], controls, mapping=MappingOptions(),
                                   scoring=ScoringOptions(n_resamples=200)).scores()


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
    assert "sentiment: agreement 0.33 below 0.75" in task.reasons
    assert not scores.tasks[third].flagged and scores.tasks[third].spa is None
    assert scores.tasks[third].n_annotations == 0


def test_project_interval_brackets_spa(scores):
    low, high = scores.controls["ner"].spa_ci
    assert low <= scores.controls["ner"].spa <= high


def test_free_text_with_thousands_of_answers_stays_within_a_few_count_matrices():
    # 1,500 tasks, three annotators, 3,000 distinct answers: a labels x labels table per annotator pair (or an
    # identity matrix for AC1) would take 72 MB each; the scores must stay within a few items x labels matrices.
    import tracemalloc

    from plugin.labelconfig import parse_label_config
    from plugin.state import ProjectState

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
