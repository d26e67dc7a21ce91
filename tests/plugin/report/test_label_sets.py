"""Label sets (multiple choices, a multi-path Taxonomy) in the report: per-label rows and confusion by label."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement import coincidence_matrix, label_counts
from agreement.confusion import set_coincidences
from plugin.mapping.labelconfig import parse_label_config
from plugin.report import build_report
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from tests.profiles import examples

# Label Studio's own template (tests/data/templates/SOURCES), made multi-path as teams use it.
CONFIG = (Path(__file__).resolve().parents[2] / "data" / "templates" / "natural-language-processing__taxonomy.xml"
          ).read_text().replace('<Taxonomy name="taxonomy" toName="text">',
                                '<Taxonomy name="taxonomy" toName="text" maxUsages="3">')
ARCHAEA, BACTERIA, HUMAN = ["Archaea"], ["Bacteria"], ["Eukarya", "Human"]


def _task(task, sets):
    return {"id": task, "data": {"text": f"t{task}"}, "meta": {}, "annotations": [
        {"id": task * 10 + who, "completed_by": who, "was_cancelled": False, "ground_truth": False,
         "created_at": "2026-01-05T09:00:00Z", "updated_at": "2026-01-05T09:00:00Z",
         "result": [{"from_name": "taxonomy", "to_name": "text", "type": "taxonomy", "value": {"taxonomy": paths}}]}
        for who, paths in sets.items()]}


def test_a_multi_path_taxonomy_shows_its_paths_not_yes_and_no():
    tasks = [_task(1, {1: [ARCHAEA], 2: [ARCHAEA, BACTERIA]}), _task(2, {1: [HUMAN], 2: [BACTERIA]}),
             _task(3, {1: [BACTERIA], 2: [BACTERIA]})]
    state = ProjectState(None, parse_label_config(CONFIG), mapping=MappingOptions(), scoring=ScoringOptions())
    state.load(tasks)
    report = build_report(state.snapshot(), source="taxonomy", generated_at="2026-11-24 12:00 UTC")
    confusion = report.confusion.set_index(["first", "second"])["coincidences"]
    assert not {"yes", "no"} & set(report.confusion["first"])
    # By hand: task 1 spreads each ordered pair over {Archaea} x {Archaea, Bacteria}, half a unit a cell; task 2
    # is one Eukarya / Human - Bacteria pair each way; task 3 one Bacteria - Bacteria pair each way.
    assert confusion[("Archaea", "Archaea")] == 1.0
    assert confusion[("Archaea", "Bacteria")] == confusion[("Bacteria", "Archaea")] == 0.5
    assert confusion[("Eukarya / Human", "Bacteria")] == confusion[("Bacteria", "Eukarya / Human")] == 1.0
    assert confusion[("Bacteria", "Bacteria")] == 2.0
    assert confusion.sum() == 6.0  # six annotations, all on items with two
    family = report.family[report.family["control"] == "taxonomy"]
    shown = set(family["label"])
    assert {"Archaea", "Bacteria", "Eukarya / Human"} <= shown and not {"yes", "no"} & shown
    # Bacteria's own yes/no items: tasks 1 (no, yes), 2 (no, yes), 3 (yes, yes): one of three items agrees.
    bacteria = family[family["label"] == "Bacteria"].iloc[0]
    assert bacteria["spa"] == pytest.approx(1 / 3)
    per_label = state.scores().controls["taxonomy"].labels
    assert per_label is not None and per_label["Bacteria"]["spa"] == pytest.approx(1 / 3)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=0, max_size=4), min_size=1, max_size=12))
def test_sets_of_one_label_give_krippendorffs_coincidences(items):
    # With one label per annotator, the coincidences of sets are Krippendorff's coincidence matrix.
    rows = [(i, f"a{k}", label) for i, labels in enumerate(items) for k, label in enumerate(labels)]
    chosen = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    counts = label_counts(chosen, categories=[0, 1, 2, 3])
    np.testing.assert_allclose(set_coincidences(chosen, [0, 1, 2, 3]), coincidence_matrix(counts), atol=1e-12)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.lists(st.sets(st.integers(0, 3), min_size=1), min_size=1, max_size=4), min_size=1, max_size=10))
def test_set_coincidences_are_symmetric_and_sum_to_the_pairable_annotations(items):
    rows = [(i, f"a{k}", label) for i, sets in enumerate(items) for k, labels in enumerate(sets) for label in labels]
    o = set_coincidences(pd.DataFrame(rows, columns=["item", "annotator", "label"]), [0, 1, 2, 3])
    np.testing.assert_allclose(o, o.T, atol=1e-12)
    assert o.sum() == pytest.approx(sum(len(sets) for sets in items if len(sets) >= 2))
    with pytest.raises(ValueError, match="not among the categories"):
        set_coincidences(pd.DataFrame(rows[:1], columns=["item", "annotator", "label"]), [9])
