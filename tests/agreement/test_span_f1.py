"""Pairwise F1 (Hripcsak & Rothschild 2005): bratiaa's example project, hand-checked cases, invariances."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.span_f1 import candidate_pairs, span_f1, task_f1
from agreement.undefined import UndefinedMeasureWarning
from agreement.units import Units, units_from_frame
from tests.agreement.span_strategies import permuted, shifted, span_projects
from tests.profiles import examples

DATA = Path(__file__).resolve().parents[1] / "data"


def export_units(path: Path) -> tuple[Units, dict]:
    """Units of a Label Studio export's Labels results, read with plain json."""
    tasks = json.loads(path.read_text(encoding="utf-8"))
    rows, present, names = [], [], {}
    for task in tasks:
        for annotation in task["annotations"]:
            who = str(annotation["completed_by"])
            present.append({"doc": task["data"]["document"], "annotator": who})
            for result in annotation["result"]:
                value = result["value"]
                rows.append({"doc": task["data"]["document"], "annotator": who, "label": value["labels"][0],
                             "start": value["start"], "end": value["end"]})
        names[task["data"]["document"]] = len(task["data"]["text"])
    return units_from_frame(pd.DataFrame(rows), present=pd.DataFrame(present), lengths=names), names


# bratiaa's example project, converted by tests/data/bratiaa_to_label_studio.py; its values recorded by
# tests/data/bratiaa_reference.py (bratiaa 0.1.4). The issue quotes LOC 0.819, MISC 0.840, ORG 0.906, PER 0.938.
@pytest.fixture(scope="module")
def bratiaa_result():
    units, _ = export_units(DATA / "bratiaa" / "export.json")
    return span_f1(units, match="exact"), json.loads((DATA / "bratiaa_reference.json").read_text())


def test_bratiaa_per_label(bratiaa_result):
    result, reference = bratiaa_result
    table = result.per_label()
    for label, value in reference["per_label"].items():
        assert table.loc[label, "mean"] == pytest.approx(value["mean"], abs=1e-12)
        assert table.loc[label, "sd"] == pytest.approx(value["sd"], abs=1e-12)
    assert table["mean"].round(3).tolist() == [0.819, 0.840, 0.906, 0.938]


def test_bratiaa_per_document_and_total(bratiaa_result):
    result, reference = bratiaa_result
    table = result.per_doc()
    assert sorted(table.index) == sorted(reference["per_document"])
    for doc, value in reference["per_document"].items():
        assert table.loc[doc, "mean"] == pytest.approx(value["mean"], abs=1e-12)
        assert table.loc[doc, "sd"] == pytest.approx(value["sd"], abs=1e-12)
    assert result.total() == pytest.approx((reference["total"]["mean"], reference["total"]["sd"]), abs=1e-12)
    assert len(result.pair_table()) == 6


def test_bratiaa_live_equals_batch(bratiaa_result):
    units, _ = export_units(DATA / "bratiaa" / "export.json")
    batch = bratiaa_result[0].per_doc()
    for code, doc in enumerate(units.docs):
        assert task_f1(units, doc=code) == batch.loc[doc, "mean"]


def test_overlap_matching_is_optimal_not_greedy():
    # a: [0, 10) and [10, 20); b: [5, 15) and [0, 9). Greedy by start would give a[0,10) to b[0,9) first anyway;
    # here a[0,10) overlaps both b's, a[10,20) only b[5,15): the most matches is 2 (a0-b1, a1-b0).
    frame = pd.DataFrame({"doc": 1, "annotator": ["a", "a", "b", "b"], "label": "X",
                          "start": [0, 10, 5, 0], "end": [10, 20, 15, 9]})
    units = units_from_frame(frame)
    result = span_f1(units, match="overlap", jaccard=0.3)
    assert result.tp.sum() == 2
    assert sorted(map(tuple, result.matches.tolist())) == [(0, 3), (1, 2)]
    # with a stricter threshold only [0, 10)-[0, 9) (0.9) qualifies: [5, 15) overlaps each a-span 1/3
    assert span_f1(units, match="overlap", jaccard=0.5).tp.sum() == 1


def test_overlap_prefers_larger_overlap_among_equally_many_matches():
    frame = pd.DataFrame({"doc": 1, "annotator": ["a", "b", "b"], "label": "X",
                          "start": [0, 0, 1], "end": [10, 6, 10]})
    result = span_f1(units_from_frame(frame), match="overlap", jaccard=0.5)
    assert result.matches.tolist() == [[0, 2]]  # Jaccard 0.9 beats 0.6


def test_exact_counts_duplicates_one_to_one():
    frame = pd.DataFrame({"doc": 1, "annotator": ["a", "a", "b"], "label": "X", "start": [0, 0, 0], "end": [4, 4, 4]})
    result = span_f1(units_from_frame(frame))
    assert (result.tp.sum(), result.n_a.sum(), result.n_b.sum()) == (1, 2, 1)
    assert result.mean == pytest.approx(2 / 3)


def test_labels_must_agree():
    frame = pd.DataFrame({"doc": 1, "annotator": ["a", "b"], "label": ["X", "Y"], "start": 0, "end": 4})
    result = span_f1(units_from_frame(frame), match="overlap")
    assert result.mean == 0.0
    assert result.per_label()["mean"].tolist() == [0.0, 0.0]  # each label: one pair, one span, no match
    two_docs = units_from_frame(pd.DataFrame({"doc": [1, 1, 2, 2], "annotator": ["a", "b", "a", "c"],
                                              "label": ["X", "X", "Y", "Y"], "start": 0, "end": 4}))
    with pytest.warns(UndefinedMeasureWarning, match="neither annotator of the pair marked a span with that label"):
        table = span_f1(two_docs).per_label()
    assert table["mean"].tolist() == [1.0, 1.0]  # pairs (a, b) on Y and (a, c) on X are left out
    assert table["pairs"].tolist() == [1, 1]


def test_nobody_marked_anything_is_undefined():
    units = units_from_frame(pd.DataFrame({"doc": [1], "annotator": ["a"], "label": ["X"], "start": [0], "end": [3]}),
                             present=pd.DataFrame({"doc": [1, 2, 2], "annotator": ["a", "a", "b"]}))
    assert units.docs == (1, 2)
    with (pytest.warns(UndefinedMeasureWarning, match="no annotator marked any span"),
          pytest.warns(UndefinedMeasureWarning, match="both annotators of a pair marked no span")):
        assert np.isnan(task_f1(units, doc=1))
    with pytest.warns(UndefinedMeasureWarning, match="fewer than two annotators"):
        assert np.isnan(task_f1(units, doc=0))


def test_candidate_search_finds_every_overlap():
    rng = np.random.default_rng(5)
    start = rng.integers(0, 80, 60)
    frame = pd.DataFrame({"doc": rng.integers(0, 3, 60), "annotator": rng.choice(["a", "b", "c"], 60),
                          "label": rng.choice(["X", "Y"], 60), "start": start, "end": start + rng.integers(1, 20, 60)})
    units = units_from_frame(frame)
    first, second, overlap = candidate_pairs(units, jaccard=0.2)
    found = {(int(i), int(j)): float(o) for i, j, o in zip(first, second, overlap, strict=True)}
    expected = {}
    for i, j in itertools.permutations(range(units.n_units), 2):
        if (units.doc[i], units.label[i]) != (units.doc[j], units.label[j]) or units.annotator[i] >= units.annotator[j]:
            continue
        inter = min(units.end[i], units.end[j]) - max(units.start[i], units.start[j])
        union = units.end[i] - units.start[i] + units.end[j] - units.start[j] - inter
        if inter > 0 and inter / union >= 0.2:
            expected[(i, j)] = inter / union
    assert found == pytest.approx(expected)


def test_options_are_checked():
    units = units_from_frame(pd.DataFrame({"doc": [1], "annotator": ["a"], "label": ["X"], "start": [0], "end": [3]}))
    with pytest.raises(ValueError, match="match must be"):
        span_f1(units, match="fuzzy")
    with pytest.raises(ValueError, match="Jaccard threshold"):
        span_f1(units, match="overlap", jaccard=0.0)


def quiet_scores(units: Units, match: str) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        result = span_f1(units, match=match, jaccard=0.5)
        return (result.total(), result.per_label().sort_index()[["mean", "sd"]].to_numpy(),
                result.per_doc().sort_index()[["mean", "sd"]].to_numpy())


def assert_same(left: tuple, right: tuple) -> None:
    assert left[0] == pytest.approx(right[0], nan_ok=True)
    np.testing.assert_allclose(left[1], right[1], atol=1e-12)
    np.testing.assert_allclose(left[2], right[2], atol=1e-12)


@settings(max_examples=examples(60), deadline=None)
@given(span_projects(), st.sampled_from(["exact", "overlap"]))
def test_identical_annotators_give_one(project, match):
    units = project.copy_first_annotator()
    total, labels, docs = quiet_scores(units, match)
    if units.n_units:
        assert total == (1.0, 0.0)
    else:
        assert np.isnan(total[0])  # nobody marked anything: undefined, not 1
    assert np.all(labels[~np.isnan(labels[:, 0])] == [1.0, 0.0])
    assert np.all(docs[~np.isnan(docs[:, 0])] == [1.0, 0.0])


@settings(max_examples=examples(60), deadline=None)
@given(span_projects(), st.sampled_from(["exact", "overlap"]), st.randoms(use_true_random=False), st.floats(0, 500))
def test_order_and_shift_change_nothing(project, match, random, shift):
    units = project.units
    base = quiet_scores(units, match)
    assert_same(base, quiet_scores(permuted(units, random), match))
    assert_same(base, quiet_scores(shifted(units, round(shift)), match))


@settings(max_examples=examples(60), deadline=None)
@given(span_projects(), st.sampled_from(["exact", "overlap"]))
def test_live_equals_batch(project, match):
    units = project.units
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        batch = span_f1(units, match=match).per_doc()
        for code, doc in enumerate(units.docs):
            live = task_f1(units, doc=code, match=match)
            if doc in batch.index:
                assert live == pytest.approx(batch.loc[doc, "mean"], nan_ok=True, abs=1e-15)
            else:
                assert np.isnan(live)


@settings(max_examples=examples(80), deadline=None)
@given(span_projects(max_units=40), st.sampled_from([0.1, 0.3, 0.5, 1.0]))
def test_overlap_makes_the_most_matches(project, jaccard):
    # The matched count of each (continuum, pair, label) is a maximum matching of the candidate graph (checked
    # by scipy's maximum_bipartite_matching), one to one, and every match is a candidate.
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    units = project.units
    result = span_f1(units, match="overlap", jaccard=jaccard)
    first, second, _ = candidate_pairs(units, jaccard=jaccard)
    m0, m1 = result.matches[:, 0], result.matches[:, 1]
    n_ann = len(units.annotators)
    assert len(np.unique(m0 * n_ann + units.annotator[m1])) == len(m0)  # a span matches one span of each other
    assert len(np.unique(m1 * n_ann + units.annotator[m0])) == len(m1)
    assert set(map(tuple, result.matches.tolist())) <= set(zip(first.tolist(), second.tolist(), strict=True))
    total = 0
    blocks = pd.DataFrame({"f": first, "s": second, "d": units.doc[first], "a": units.annotator[first],
                           "b": units.annotator[second], "l": units.label[first]})
    for _, block in blocks.groupby(["d", "a", "b", "l"]):
        rows, r = np.unique(block["f"], return_inverse=True)
        cols, c = np.unique(block["s"], return_inverse=True)
        graph = csr_matrix((np.ones(len(block)), (r, c)), shape=(len(rows), len(cols)))
        total += int(np.sum(maximum_bipartite_matching(graph, perm_type="column") >= 0))
    assert result.tp.sum() == total == len(result.matches)


def test_exact_compares_positions_not_a_rounded_ratio():
    # [0, 1e9) and [4e-8, 1e9): the intersection 1e9 - 4e-8 rounds to 1e9, so the Jaccard ratio is exactly 1.0
    frame = pd.DataFrame({"doc": 1, "annotator": ["a", "b"], "label": "X", "start": [0.0, 4e-8], "end": 1e9})
    assert span_f1(units_from_frame(frame)).tp.sum() == 0
    assert span_f1(units_from_frame(frame), match="overlap", jaccard=0.99).tp.sum() == 1


def test_narrow_codes_of_many_annotators_name_every_pair():
    # 200 annotators: a pair's code a * 200 + b passes int16's range though each code fits it
    names = [f"a{k:03d}" for k in range(200)]
    frame = pd.DataFrame({"doc": 1, "annotator": names, "label": "PER", "start": 0, "end": 5})
    result = span_f1(units_from_frame(frame))
    assert result.annotator_a.dtype == np.int16 and result.tp.dtype == np.int16
    table = result.pair_table()
    assert len(table) == 200 * 199 // 2 and (table["f1"] == 1.0).all()
    assert list(zip(table["annotator_a"], table["annotator_b"], strict=True)) == list(itertools.combinations(names, 2))
