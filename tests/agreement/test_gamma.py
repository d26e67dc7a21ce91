"""Mathet's gamma (Mathet, Widlöcher & Métivier 2015) against DKPro's pygamma fixtures and pygamma-agreement.

Also the properties it must have on generated projects.
"""

import importlib
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.alignment import best_alignment
from agreement.gamma import (
    _components_within_reach,
    _sample,
    _statistics,
    dissimilarity,
    expected_disorder,
    gamma,
    observed_disorder,
    task_gamma,
    task_gammas,
)
from agreement.set_partition import MAX_CANDIDATES
from agreement.undefined import UndefinedMeasureWarning
from agreement.units import units_from_frame
from tests.profiles import examples

REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "pygamma_reference.json").read_text())["documents"]

# Best-alignment disorders printed in DKPro Agreement's pygamma fixtures (dkpro/dkpro-statistics,
# dkpro-statistics-agreement/src/test/resources/pygamma/fixture_0N_*.json, "tier1.bestAlignmentDisorder", computed
# by pygamma-agreement 0.5.9 with GLPK); the units are transcribed in tests/data/pygamma_reference.py.
DKPRO = {"fixture_01": 0.0625, "fixture_02": 0.7083333134651184, "fixture_03": 0.0,
         "fixture_04": 0.40875643491744995, "fixture_05": 1.0743801593780518, "fixture_06": 1.0277777910232544}


def units_of(rows, doc="d"):
    frame = pd.DataFrame(rows, columns=["annotator", "start", "end", "label"])
    frame["doc"] = doc
    return units_from_frame(frame)


def options(name):
    return {"alpha": REFERENCE[name]["alpha"], "beta": REFERENCE[name]["beta"]}


@pytest.mark.parametrize("name", sorted(DKPRO))
def test_best_alignment_disorder_of_dkpro_pygamma_fixtures(name):
    units = units_of(REFERENCE[name]["units"])
    # pygamma computes in float32: its disorders carry 7 significant digits
    assert observed_disorder(units, **options(name)).value == pytest.approx(DKPRO[name], abs=1e-6)


def test_dkpro_fixture_pair_dissimilarities():
    # fixture_04, tier1.pairDissimilarities: Ann1 [1, 5) a vs Ann3 [1, 4) a: positional 0.020408 (= (1/7)²);
    # Ann1 [10, 14) b vs Ann3 [9, 14) c: 0.012346 + 1; fixture_06 (alpha 3, beta 2): [6, 10) b vs [2, 7) a: 3.814815.
    assert dissimilarity([1, 1], [5, 4], [0, 0])[0, 1] == pytest.approx(0.020408162847161293, abs=1e-7)
    assert dissimilarity([10, 9], [14, 14], [1, 2])[0, 1] == pytest.approx(1.0123456716537476, abs=1e-7)
    assert dissimilarity([6, 2], [10, 7], [1, 0], alpha=3, beta=2)[0, 1] == pytest.approx(3.814814805984497, abs=1e-6)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_observed_disorder_equals_pygamma(name):
    units = units_of(REFERENCE[name]["units"])
    assert observed_disorder(units, **options(name)).value == pytest.approx(REFERENCE[name]["observed"], abs=1e-6)


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_gamma_within_pygamma_spread_over_seeds(name):
    # Both sample D_e with the same statistical sampler and different random streams: over as many seeds as
    # pygamma was run with, the mean gammas must agree within 3 standard errors of their difference (a gamma
    # within pygamma's own spread), and our interval must be about as wide as pygamma's spread.
    reference = np.array(REFERENCE[name]["gamma"])
    units = units_of(REFERENCE[name]["units"])
    ours = np.array([gamma(units, seed=seed, **options(name)).value for seed in range(len(reference))])
    if reference.std() == 0:  # identical annotators: gamma is 1 whatever the samples
        assert ours.tolist() == reference.tolist() == [1.0] * len(reference)
        return
    error = np.sqrt(reference.var(ddof=1) / len(reference) + ours.var(ddof=1) / len(ours))
    assert abs(ours.mean() - reference.mean()) <= 3 * error
    assert reference.min() - 3 * reference.std(ddof=1) <= ours.min() and ours.max() <= reference.max() + 3 * (
        reference.std(ddof=1))


def test_interval_holds_the_value_and_the_seed_repeats():
    units = units_of(REFERENCE["random_2x6"]["units"])
    first, again, other = gamma(units, seed=3), gamma(units, seed=3), gamma(units, seed=4)
    assert first == again
    assert first.value != other.value
    assert first.low < first.value < first.high
    assert first.n_samples == 30 and first.seed == 3
    expected = expected_disorder(units, seed=3)
    assert expected.value == pytest.approx(first.expected)
    assert expected.low < expected.value < expected.high
    # the interval is 1.96 standard errors of the mean on each side
    half = 1.959963984540054 * expected.samples.std(ddof=1) / np.sqrt(30)
    assert expected.precision == pytest.approx(half / expected.value)


def test_sampler_statistics_are_pygammas():
    # fixture_02: Ann1 [1, 5) [6, 10) [20, 24) [30, 34), Ann2 [2, 6) [31, 35). pygamma's StatisticalContinuumSampler
    # takes 4 and 2 units per annotator (mean 3, SD 1); gaps 0 (always), the first starts 1 and 2, then 6 - 5,
    # 20 - 10, 30 - 24 and 31 - 6; lengths all 4; labels a and b half each.
    statistics = _statistics(units_of(REFERENCE["fixture_02"]["units"]))
    gaps = np.array([0, 1, 2, 1, 10, 6, 25], dtype=float)
    assert statistics.count == (3.0, 1.0)
    assert statistics.gap == pytest.approx((gaps.mean(), gaps.std()))
    assert statistics.length == (4.0, 0.0)
    assert statistics.weights.tolist() == [0.5, 0.5]


def test_sampled_continua_keep_the_annotators_and_never_come_out_empty():
    statistics = _statistics(units_of(REFERENCE["fixture_04"]["units"]))
    doc, who, start, end, label = _sample(statistics, np.array([3, 2, 4]), np.random.default_rng(0))
    assert set(label.tolist()) <= set(statistics.labels.tolist())
    assert (np.diff(doc) >= 0).all()  # end to end, by continuum
    assert [int(who[doc == d].max()) + 1 <= n for d, n in enumerate((3, 2, 4))] == [True] * 3
    assert np.bincount(doc, minlength=3).min() > 0
    assert (end > start).all()
    # one unit per annotator on average, SD 0: a first annotator who drew none gets one, the others keep theirs
    few = _statistics(units_of([("A", 0, 2, "x"), ("B", 1, 3, "x")]))
    few = type(few)((0.2, 0.0), few.gap, few.length, few.labels, few.weights)
    doc, who, *_ = _sample(few, np.array([3, 3]), np.random.default_rng(0))
    assert (doc.tolist(), who.tolist()) == ([0, 1], [0, 0])


def test_max_docs_bounds_a_sampled_corpus():
    rows = [(doc, a, "x", 10 * i + (a == "B"), 10 * i + 5) for doc in range(12) for a in "AB" for i in range(3)]
    frame = pd.DataFrame(rows, columns=["doc", "annotator", "label", "start", "end"])
    units = units_from_frame(frame)
    capped, full = expected_disorder(units, max_docs=4, n_samples=8), expected_disorder(units, n_samples=8)
    assert capped.samples.shape == full.samples.shape == (8,)
    assert capped.samples.std() > full.samples.std()  # fewer continua per sampled corpus: more spread


def test_one_annotator_is_undefined():
    units = units_of([("A", 0, 5, "x"), ("A", 6, 9, "y")])
    with pytest.warns(UndefinedMeasureWarning, match="at least two annotators"):
        assert np.isnan(gamma(units).value)


def test_task_gamma_needs_one_task():
    frame = pd.DataFrame({"doc": [1, 2], "annotator": ["A", "B"], "label": "x", "start": [0, 0], "end": [5, 5]})
    with pytest.raises(ValueError, match="one task"):
        task_gamma(units_from_frame(frame), 1.0)


def test_task_gamma_of_a_task_nobody_marked_is_undefined():
    frame = pd.DataFrame({"doc": [], "annotator": [], "label": [], "start": [], "end": []})
    units = units_from_frame(frame, present=pd.DataFrame({"doc": [3, 3], "annotator": ["A", "B"]}), labels=["x"])
    with pytest.warns(UndefinedMeasureWarning, match="nobody marked"):
        assert np.isnan(task_gamma(units, 1.0))


# ---- properties --------------------------------------------------------------------------------------------------

@st.composite
def projects(draw, *, max_docs=3, max_annotators=3, max_units=3, max_start=40):
    """A unit table: a few tasks, each annotated by two to four annotators with up to three units each."""
    rows = []
    for doc in range(draw(st.integers(1, max_docs))):
        for a in range(draw(st.integers(2, max_annotators))):
            for _ in range(draw(st.integers(0, max_units))):
                start = draw(st.integers(0, max_start))
                rows.append((doc, f"a{a}", draw(st.sampled_from("xyz")), start, start + draw(st.integers(1, 9))))
    frame = pd.DataFrame(rows, columns=["doc", "annotator", "label", "start", "end"])
    if frame.empty or frame["annotator"].nunique() < 2:
        rows += [(0, "a0", "x", 0, 4), (0, "a1", "x", 1, 4)]
        frame = pd.DataFrame(rows, columns=["doc", "annotator", "label", "start", "end"])
    return frame


@settings(max_examples=examples(25), deadline=None)
@given(projects())
def test_identical_annotators_give_one(frame):
    base = frame[frame["annotator"] == frame["annotator"].iloc[0]].copy()
    copies = pd.concat([base.assign(annotator=name) for name in ("p", "q", "r")])
    units = units_from_frame(copies)
    assert observed_disorder(units).value == 0.0
    assert gamma(units, n_samples=5).value == 1.0


@settings(max_examples=examples(25), deadline=None)
@given(projects(), st.randoms(use_true_random=False))
def test_annotator_order_and_unit_order_change_nothing(frame, random):
    units = units_from_frame(frame)
    names = sorted(frame["annotator"].unique())
    renamed = dict(zip(names, random.sample(names, len(names))))
    shuffled = frame.assign(annotator=frame["annotator"].map(renamed)).sample(frac=1.0,
                                                                              random_state=random.randint(0, 99))
    other = units_from_frame(shuffled)
    a, b = observed_disorder(units), observed_disorder(other)
    assert a.value == pytest.approx(b.value, abs=1e-12, nan_ok=True)
    order = [other.docs.index(doc) for doc in units.docs]
    np.testing.assert_allclose(a.per_task, b.per_task[order], atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        first, second = gamma(units, n_samples=5), gamma(other, n_samples=5)
    for field in ("value", "observed", "expected", "low", "high"):
        assert getattr(first, field) == pytest.approx(getattr(second, field), abs=1e-12, nan_ok=True)


@settings(max_examples=examples(25), deadline=None)
@given(projects(), st.integers(1, 1000))
def test_shifting_every_unit_changes_no_disorder(frame, shift):
    units, shifted = units_from_frame(frame), units_from_frame(frame.assign(start=frame["start"] + shift,
                                                                              end=frame["end"] + shift))
    a, b = observed_disorder(units), observed_disorder(shifted)
    np.testing.assert_allclose(a.per_task, b.per_task, atol=1e-12)
    np.testing.assert_allclose(task_gammas(units, 1.3), task_gammas(shifted, 1.3), atol=1e-12)


@settings(max_examples=examples(25), deadline=None)
@given(projects())
def test_task_gamma_live_equals_batch(frame):
    units = units_from_frame(frame)
    expected = 1.1
    batch = task_gammas(units, expected)
    for d, doc in enumerate(units.docs):
        alone = units_from_frame(frame[frame["doc"] == doc])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            live = task_gamma(alone, expected)
        assert live == pytest.approx(batch[d], abs=1e-12, nan_ok=True)


@settings(max_examples=examples(25), deadline=None)
@given(projects())
def test_continua_aligned_in_chunks_give_the_same_disorders(frame):
    # a project's continua are aligned a chunk of units and of pairs at a time: one continuum, one component a
    # chunk changes nothing
    module = importlib.import_module("agreement.gamma")  # agreement.gamma is the measure, not the module

    units = units_from_frame(frame)
    whole = observed_disorder(units)
    saved = module.PAIRS_AT_ONCE, module.UNITS_AT_ONCE
    module.PAIRS_AT_ONCE = module.UNITS_AT_ONCE = 1
    try:
        chunked = observed_disorder(units)
    finally:
        module.PAIRS_AT_ONCE, module.UNITS_AT_ONCE = saved
    assert chunked.total.tolist() == pytest.approx(whole.total.tolist(), abs=1e-12)
    assert chunked.units_per_annotator.tolist() == whole.units_per_annotator.tolist()


@settings(max_examples=examples(60), deadline=None)
@given(projects(max_annotators=4, max_units=4, max_start=120), st.sampled_from([0.0, 0.5, 1.0, 3.0]),
       st.sampled_from([0.0, 1.0, 2.0]), st.sampled_from([0.5, 1.0, 2.0]), st.booleans())
def test_disorders_equal_each_continuums_best_alignment_over_every_pair(frame, alpha, beta, delta_empty, distances):
    # a continuum is aligned as components of units within reach of each other, found without comparing units
    # that start too far apart: the same totals as the best alignment of all its units over every pair
    units = units_from_frame(frame)
    label_distance = None
    if distances:
        label_distance = np.array([[0.0, 0.25, 1.0], [0.25, 0.0, 0.5], [1.0, 0.5, 0.0]])[:len(units.labels),
                                                                                       :len(units.labels)]
    options = {"alpha": alpha, "beta": beta, "delta_empty": delta_empty, "label_distance": label_distance}
    observed = observed_disorder(units, **options)
    for d in range(len(units.docs)):
        here = units.doc == d
        present = np.flatnonzero(units.present[d])
        if len(present) < 2 or not here.any():
            assert observed.total[d] == 0.0
            continue
        matrix = dissimilarity(units.start[here], units.end[here], units.label[here], **options)
        who = np.searchsorted(present, units.annotator[here])
        best = best_alignment(who, matrix, n_annotators=len(present), delta_empty=delta_empty)
        assert observed.total[d] == pytest.approx(best.total, abs=1e-9)


def test_a_long_unit_costs_its_own_pairs_not_every_pair_of_its_continuum():
    # 3,000 short units 20 apart and one over the whole text: the long unit is compared with every unit, the short
    # ones only with their neighbours (all against all would be 4.5 million pairs), a slice of pairs at a time
    module = importlib.import_module("agreement.gamma")  # agreement.gamma is the measure, not the module

    n = 3000
    start = np.append(np.arange(n) * 20.0, 0.0)
    end = np.append(start[:n] + 5.0, n * 20.0)
    annotator = np.append(np.arange(n) % 3, 0)
    compared = []
    original = module._pair_dissimilarity

    def counting(*args, **kwargs):
        compared.append(len(args[0]))
        return original(*args, **kwargs)

    saved = module.PAIRS_AT_ONCE
    module._pair_dissimilarity, module.PAIRS_AT_ONCE = counting, 2_000
    try:
        component, _, _ = _components_within_reach(np.zeros(n + 1, dtype=np.intp), annotator, start, end,
                                                   np.zeros(n + 1, dtype=np.intp), reach=5.0, alpha=1.0,
                                                   beta=1.0, delta_empty=1.0, label_distance=None)
    finally:
        module._pair_dissimilarity, module.PAIRS_AT_ONCE = original, saved
    assert sum(compared) < 4 * n
    assert max(compared) <= 2_000 + n  # a slice, or the long unit's own pairs
    # the long unit (annotator 0) is within reach of every short unit of annotators 1 and 2; annotator 0's own short
    # units, 40 apart from one another's ends, stand alone
    assert len(set(component[annotator != 0].tolist())) == 1
    assert len(set(component.tolist())) == 1 + n // 3


def _crowd(n_annotators):
    """Continuum 1: ``n_annotators`` marking one span alike; continuum 2: three annotators, a boundary apart."""
    rows = [{"doc": 1, "annotator": f"a{k}", "label": "x", "start": 10, "end": 20} for k in range(n_annotators)]
    rows += [{"doc": 2, "annotator": f"a{k}", "label": "x" if k else "y", "start": 10 + (k % 2), "end": 20}
             for k in range(3)]
    return units_from_frame(pd.DataFrame(rows))


def test_a_place_too_many_annotators_share_is_left_unaligned_with_a_warning_not_aligned_at_any_cost():
    # n annotators on one place have 2^n candidate unitary alignments: 16 are aligned (65,536), 17 are not (the
    # enumeration once asked for gigabytes with 30); the other continuum's disorder is as it is alone
    assert MAX_CANDIDATES == 2 ** 16
    alone = observed_disorder(_crowd(0))
    aligned = observed_disorder(_crowd(16))
    assert not aligned.unaligned.any() and aligned.per_task[0] == 0.0
    with pytest.warns(UndefinedMeasureWarning, match="disorder of 1 continuum is undefined: units there overlap "
                                                     "among too many annotators to align exactly"):
        left = observed_disorder(_crowd(17))
    assert left.unaligned.tolist() == [True, False] and np.isnan(left.per_task[0])
    assert left.per_task[1] == pytest.approx(alone.per_task[-1], abs=1e-12)
    assert left.value == pytest.approx(alone.value, abs=1e-12)  # the corpus's value over the continua aligned


def test_the_expected_disorder_leaving_continua_out_is_that_of_the_corpus_without_them():
    units = _crowd(17)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        left = observed_disorder(units).unaligned
    kept = expected_disorder(units, n_samples=5, seed=3, leave_out=left)
    alone = expected_disorder(_crowd(0), n_samples=5, seed=3)
    assert kept.value == pytest.approx(alone.value, rel=1e-12)
    np.testing.assert_allclose(kept.samples, alone.samples, rtol=1e-12)


def test_a_sentence_tagged_token_by_token_is_aligned_however_long():
    # three annotators tag 60 adjacent tokens each (a one-token shift for the third): every token is within reach
    # of its neighbours, so the whole text is one component of 180 units. Its candidate groups are local, a few
    # per token: it is aligned, where a bound of the product of the annotators' units (61^3) would refuse it
    rows = [{"doc": 1, "annotator": f"a{k}", "label": "x", "start": 2 * t + (k == 2), "end": 2 * t + 2 + (k == 2)}
            for k in range(3) for t in range(60)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndefinedMeasureWarning)
        disorder = observed_disorder(units_from_frame(pd.DataFrame(rows)))
    assert not disorder.unaligned.any() and 0 < disorder.per_task[0] < 1
