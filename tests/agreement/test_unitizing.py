"""Krippendorff's unitizing alphas: the 1995/2004 form (DKPro Agreement's conventions) and the 2016 uα family."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement.undefined import UndefinedMeasureWarning
from agreement.unitizing import u_alpha, unitizing_alpha
from agreement.units import Units, units_from_frame
from tests.agreement.span_strategies import permuted, shifted, span_projects
from tests.profiles import examples

DATA = Path(__file__).resolve().parents[1] / "data"

# Krippendorff (2004), Content Analysis, 2nd ed., p. 254: observers i and j on a continuum of 300 characters
# (DKPro Agreement, Krippendorff2004Test.createExample: begin 150, length 300; shifted here to begin at 0).
# (begin, length, observer, category)
KRIPPENDORFF_2004 = [(225, 70, "i", "c"), (370, 30, "i", "c"), (220, 80, "j", "c"), (355, 20, "j", "c"),
                     (400, 20, "j", "c"), (180, 60, "i", "k"), (300, 50, "i", "k"), (180, 60, "j", "k"),
                     (300, 50, "j", "k")]


def krippendorff_2004() -> Units:
    frame = pd.DataFrame([{"doc": "p254", "annotator": who, "label": label, "start": begin - 150,
                           "end": begin - 150 + length} for begin, length, who, label in KRIPPENDORFF_2004])
    return units_from_frame(frame, lengths={"p254": 300})


def test_krippendorff_2004_per_label():
    result = unitizing_alpha(krippendorff_2004())
    c, k = result.per_label.loc["c"], result.per_label.loc["k"]
    assert (round(c["value"], 4), round(c["observed"], 4), round(c["expected"], 4)) == (0.7286, 0.0144, 0.0532)
    assert (k["value"], k["observed"], round(k["expected"], 4)) == (1.0, 0.0, 0.0490)


def test_krippendorff_2004_overall():
    # The book (and DKPro's test, to 0.0005) print 0.8591: 1 - 0.0144 / (0.0532 + 0.0490) from the rounded label
    # values. From the data, D_o = (0.014444 + 0) / 2 and D_e = (0.053222 + 0.048979) / 2 give 0.858665.
    result = unitizing_alpha(krippendorff_2004())
    assert round(1 - 0.0144 / (0.0532 + 0.0490), 4) == 0.8591
    assert result.value == pytest.approx(0.858665, abs=1e-6)
    (o_c, e_c), (o_k, e_k) = (brute_force_1995(krippendorff_2004(), label) for label in "ck")
    assert result.value == pytest.approx(1 - (o_c + o_k) / (e_c + e_k), abs=1e-12)


def test_dkpro_small_example():
    # DKPro Agreement, UnitizingAgreementTest.createExample (L = 10): r0 -11111111-, r1 --1-1-1---.
    # DKPro asserts -0.7003, D_o 0.9100 and D_e 0.5351 to 0.0001; D_e is 0.535185 (289/540).
    frame = pd.DataFrame({"doc": 0, "annotator": ["r0", "r1", "r1", "r1"], "label": "A",
                          "start": [1, 2, 4, 6], "end": [9, 3, 5, 7]})
    result = unitizing_alpha(units_from_frame(frame, lengths={0: 10}))
    assert result.value == pytest.approx(-0.7003, abs=1e-4)
    assert result.observed == pytest.approx(0.9100, abs=1e-12)
    assert result.expected == pytest.approx(289 / 540, abs=1e-12)
    assert result.expected == pytest.approx(0.5351, abs=1e-4)


def brute_force_1995(units: Units, label: str) -> tuple[float, float]:
    """D_o and D_e of one label from Krippendorff's (1995) formulas, segment by segment (all coders on one continuum
    made of the tasks end to end; no coder's units of the label overlap)."""
    offsets = np.r_[0, np.cumsum(units.lengths)[:-1]]
    length = float(units.lengths.sum())
    c = units.labels.index(label)
    coders = range(len(units.annotators))
    segments = {}
    for i in coders:
        mine = (units.annotator == i) & (units.label == c)
        spans = sorted(zip(units.start[mine] + offsets[units.doc[mine]], units.end[mine] + offsets[units.doc[mine]],
                           strict=True))
        out, position = [], 0.0
        for s, e in spans:
            if s > position:
                out.append((position, s, False))
            out.append((s, e, True))
            position = e
        if position < length:
            out.append((position, length, False))
        segments[i] = out

    def delta(g, h):
        (bg, eg, ug), (bh, eh, uh) = g, h
        if ug and uh and bg < eh and bh < eg:
            return (bg - bh) ** 2 + (eg - eh) ** 2
        if ug and not uh and bh <= bg and eg <= eh:
            return (eg - bg) ** 2
        if uh and not ug and bg <= bh and eh <= eg:
            return (eh - bh) ** 2
        return 0.0

    m = len(coders)
    observed = sum(delta(g, h) for i in coders for j in coders if i != j for g in segments[i] for h in segments[j])
    observed /= m * (m - 1) * length ** 2
    unit_lengths = [e - s for i in coders for s, e, u in segments[i] if u]
    gaps = [e - s for i in coders for s, e, u in segments[i] if not u]
    n_c = len(unit_lengths)
    numerator = sum((n_c - 1) * (2 * lg ** 3 - 3 * lg ** 2 + lg) / 3
                    + lg ** 2 * sum(lh - lg + 1 for lh in gaps if lh >= lg) for lg in unit_lengths)
    expected = 2 / length * numerator / (m * length * (m * length - 1) - sum(lg * (lg - 1) for lg in unit_lengths))
    return observed, expected


def disjoint_by_label(units: Units) -> Units:
    """The units, with each coder's overlapping units of one label replaced by their union (what both forms do)."""
    rows = []
    for (d, a, c), part in pd.DataFrame({"d": units.doc, "a": units.annotator, "c": units.label, "s": units.start,
                                         "e": units.end}).sort_values("s").groupby(["d", "a", "c"]):
        reach = -1.0
        for s, e in zip(part["s"], part["e"], strict=True):
            if rows and rows[-1][:3] == (d, a, c) and s < reach:
                rows[-1] = (d, a, c, rows[-1][3], max(reach, e))
            else:
                rows.append((d, a, c, s, e))
            reach = max(reach, e) if rows[-1][:3] == (d, a, c) else e
    d, a, c, s, e = (np.array(x) for x in zip(*rows, strict=True)) if rows else [np.zeros(0, int)] * 5
    return Units(d.astype(np.intp), a.astype(np.intp), c.astype(np.intp), s.astype(float), e.astype(float),
                 units.docs, units.annotators, units.labels, units.present, units.lengths)


@settings(max_examples=examples(80), deadline=None)
@given(span_projects(max_annotators=3))
def test_1995_equals_its_formulas_segment_by_segment(project):
    units = project.units
    everyone = Units(units.doc, units.annotator, units.label, units.start, units.end, units.docs, units.annotators,
                     units.labels, np.ones_like(units.present), units.lengths)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        result = unitizing_alpha(everyone)
    merged = disjoint_by_label(everyone)
    for label in result.per_label.index:
        observed, expected = brute_force_1995(merged, label)
        assert result.per_label.loc[label, "observed"] == pytest.approx(observed, rel=1e-9, abs=1e-15)
        assert result.per_label.loc[label, "expected"] == pytest.approx(expected, rel=1e-9, abs=1e-15)


def brute_force_u_alpha(units: Units) -> tuple[float, float, float]:
    """uα, |uα, cuα by counting coincidences position by position (whole-number positions)."""
    n_lab = len(units.labels)
    blank = n_lab
    coincidences = np.zeros((n_lab + 1, n_lab + 1))
    binary = np.zeros((2, 2))
    weights, binary_weights = np.zeros(n_lab + 1), np.zeros(2)
    merged = disjoint_by_label(units)
    for d, length in enumerate(units.lengths.astype(int)):
        coders = np.flatnonzero(units.present[d])
        if len(coders) < 2:
            continue
        values = {i: [set() for _ in range(length)] for i in coders}
        for k in np.flatnonzero(merged.doc == d):
            weights[merged.label[k]] += (merged.end[k] - merged.start[k]) ** 2
            for x in range(int(merged.start[k]), int(merged.end[k])):
                values[merged.annotator[k]][x].add(merged.label[k])
        for i in coders:
            inside = [bool(v) for v in values[i]]
            weights[blank] += length - sum(inside)
            binary_weights[1] += length - sum(inside)
        # |uα: a coder's units whatever their label, merged where they overlap (units that only touch stay two)
        one_label = disjoint_by_label(Units(units.doc, units.annotator, np.zeros_like(units.label), units.start,
                                            units.end, units.docs, units.annotators, units.labels, units.present,
                                            units.lengths))
        binary_weights[0] += np.sum((one_label.end - one_label.start)[one_label.doc == d] ** 2)
        for i in coders:
            for j in coders:
                if i == j:
                    continue
                for x in range(length):
                    for c in values[i][x] or {blank}:
                        for k in values[j][x] or {blank}:
                            coincidences[c, k] += 1 / (len(coders) - 1)
                    binary[int(not values[i][x]), int(not values[j][x])] += 1 / (len(coders) - 1)

    def alpha(o, w):
        n = o.sum()
        e = n * (o.sum(axis=1) ** 2 - w) / (n ** 2 - w.sum())
        return np.nan if n - e.sum() < 1e-9 * n else 1 - (n - np.trace(o)) / (n - e.sum())

    o = coincidences[:n_lab, :n_lab]
    n, margin = o.sum(), o.sum(axis=1)
    # undefined, as the measure is, where every position two coders put in units has one label (the expected
    # disagreement is 0; counted in floats it may come out as a tiny number of either sign)
    spread = n ** 2 - np.sum(margin ** 2)
    coding = np.nan if n <= 1 or spread <= 1e-9 * n ** 2 else 1 - ((n - np.trace(o)) / n) / (spread / (n * (n - 1)))
    return alpha(coincidences, weights), alpha(binary, binary_weights), coding


def test_u_alpha_krippendorff_2004():
    # Both krippendorff-unitized-alpha (PyPI) and quallmer's R code give 0.5909 on Krippendorff's 2004 example.
    result = u_alpha(krippendorff_2004())
    assert round(result.value, 4) == 0.5909
    reference = json.loads((DATA / "unitized_alpha_reference.json").read_text())
    assert result.value == pytest.approx(reference["krippendorff_2004"]["u_alpha"], abs=1e-12)
    assert (result.value, result.binary, result.coding) == pytest.approx(brute_force_u_alpha(krippendorff_2004()))


@pytest.mark.parametrize("case", range(6))
def test_u_alpha_equals_krippendorff_unitized_alpha(case):
    recorded = json.loads((DATA / "unitized_alpha_reference.json").read_text())["random"][case]
    frame = pd.DataFrame([{"doc": 0, "annotator": coder, "label": label, "start": s, "end": e}
                          for coder, units in recorded["coders"].items() for s, e, label in units])
    present = pd.DataFrame({"doc": 0, "annotator": list(recorded["coders"])})
    units = units_from_frame(frame, present=present, lengths={0: recorded["length"]})
    assert u_alpha(units).value == pytest.approx(recorded["u_alpha"], abs=1e-12)


@settings(max_examples=examples(60), deadline=None)
@given(span_projects())
def test_u_alpha_equals_counting_position_by_position(project):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        result = u_alpha(project.units)
        expected = brute_force_u_alpha(project.units)
    assert (result.value, result.binary, result.coding) == pytest.approx(expected, nan_ok=True, rel=1e-9)


@settings(max_examples=examples(60), deadline=None)
@given(span_projects(), st.integers(1, 12))
def test_u_alpha_over_blocks_of_continua_equals_u_alpha_at_once(project, at_once):
    """A large project's uα is summed a block of continua at a time (agreement.unitizing.UNITS_AT_ONCE merged
    units): blocks as small as one continuum give what all at once gives."""
    from agreement import unitizing

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        whole = u_alpha(project.units)
        held, unitizing.UNITS_AT_ONCE = unitizing.UNITS_AT_ONCE, at_once
        try:
            blocks = u_alpha(project.units)
        finally:
            unitizing.UNITS_AT_ONCE = held
    assert (blocks.value, blocks.binary, blocks.coding) == pytest.approx(
        (whole.value, whole.binary, whole.coding), nan_ok=True, rel=1e-12, abs=1e-12)
    assert blocks.coincidences.to_numpy() == pytest.approx(whole.coincidences.to_numpy(), rel=1e-12, abs=1e-9)


def test_undefined_is_nan_with_a_reason():
    # both coders mark the whole continuum of one position: no gap, units of length 1, D_e = 0 (DKPro returns 0)
    whole = units_from_frame(pd.DataFrame({"doc": 0, "annotator": ["a", "b"], "label": "X", "start": 0, "end": 1}),
                             lengths={0: 1})
    with (pytest.warns(UndefinedMeasureWarning, match="unitizing alpha is undefined: the expected disagreement is 0"),
          pytest.warns(UndefinedMeasureWarning, match="expected disagreement of \\['X'\\] is 0")):
        result = unitizing_alpha(whole)
    assert np.isnan(result.per_label.loc["X", "value"]) and np.isnan(result.value)
    with pytest.warns(UndefinedMeasureWarning) as caught:
        result = u_alpha(whole)
    assert np.isnan(result.value) and np.isnan(result.coding)
    assert any("cuα is undefined: the positions two coders put in units all have one label" in str(w.message)
               for w in caught)
    empty = units_from_frame(pd.DataFrame({"doc": [], "annotator": [], "label": [], "start": [], "end": []}))
    with pytest.warns(UndefinedMeasureWarning, match="no coder marked a unit"):
        assert np.isnan(unitizing_alpha(empty).value)


def quiet(function, units):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        return function(units)


@settings(max_examples=examples(60), deadline=None)
@given(span_projects())
def test_identical_coders_give_one(project):
    units = project.copy_first_annotator()
    alpha = quiet(unitizing_alpha, units)
    assert np.all(alpha.per_label["observed"] == 0)
    defined = alpha.per_label["expected"] > 0
    assert np.all(alpha.per_label.loc[defined, "value"] == 1.0)
    # uα's premise: one value per position; a coder's units that overlap across labels disagree with themselves
    keep, reach = [], {}
    for k in np.argsort(units.start, kind="stable"):
        if units.start[k] >= reach.get((units.doc[k], units.annotator[k]), -1):
            keep.append(k)
            reach[(units.doc[k], units.annotator[k])] = units.end[k]
    mask = np.zeros(units.n_units, dtype=bool)
    mask[keep] = True
    result = quiet(u_alpha, units.select(mask))
    for value in (result.value, result.binary, result.coding):
        assert np.isnan(value) or value == pytest.approx(1.0)


@settings(max_examples=examples(60), deadline=None)
@given(span_projects(), st.randoms(use_true_random=False))
def test_coder_unit_and_label_order_change_nothing(project, random):
    units = project.units
    again = permuted(units, random)  # uα sums over tasks, so their order may change too
    a, b = quiet(u_alpha, units), quiet(u_alpha, again)
    assert (a.value, a.binary, a.coding) == pytest.approx((b.value, b.binary, b.coding), nan_ok=True, rel=1e-9)


@settings(max_examples=examples(60), deadline=None)
@given(span_projects(), st.randoms(use_true_random=False))
def test_1995_coder_unit_and_label_order_change_nothing(project, random):
    units = project.units
    rows = np.array(random.sample(range(units.n_units), units.n_units), dtype=np.intp)
    ann = np.array(random.sample(range(len(units.annotators)), len(units.annotators)), dtype=np.intp)
    again = Units(units.doc[rows], ann[units.annotator[rows]], units.label[rows], units.start[rows], units.end[rows],
                  units.docs, tuple(units.annotators[i] for i in np.argsort(ann)), units.labels,
                  units.present[:, np.argsort(ann)], units.lengths)
    a, b = quiet(unitizing_alpha, units), quiet(unitizing_alpha, again)
    assert a.value == pytest.approx(b.value, nan_ok=True, rel=1e-9)
    pd.testing.assert_frame_equal(a.per_label, b.per_label, rtol=1e-9)


@settings(max_examples=examples(60), deadline=None)
@given(span_projects(), st.integers(1, 500))
def test_shift_moves_only_the_blank(project, shift):
    # Moving every unit along its continuum, the continuum growing with it, adds blank before the units: the units'
    # disagreements (1995: the sums over segment pairs; 2016: the coincidences of labels, so cuα) are unchanged, and
    # only what depends on the amount of blank (D_e, the blank coincidences) moves.
    units = project.units
    moved = shifted(units, float(shift))
    a, b = quiet(unitizing_alpha, units), quiet(unitizing_alpha, moved)

    def observed_sum(result, u):
        n = u.present.sum(axis=1)
        return result.per_label["observed"] * u.lengths.sum() * np.sum(n * (n - 1) * u.lengths)

    pd.testing.assert_series_equal(observed_sum(a, units), observed_sum(b, moved), rtol=1e-9)
    ua, ub = quiet(u_alpha, units), quiet(u_alpha, moved)
    assert ua.coding == pytest.approx(ub.coding, nan_ok=True, rel=1e-9)
    np.testing.assert_allclose(ua.coincidences.to_numpy()[:, :-1], ub.coincidences.to_numpy()[:, :-1], rtol=1e-9)


@settings(max_examples=examples(60), deadline=None)
@given(span_projects())
def test_mirroring_the_continuum_changes_nothing(project):
    # x -> L - x on the project's continuum: each task mirrored, the tasks in reverse order.
    units = project.units
    n = len(units.docs)
    mirrored = Units((n - 1 - units.doc).astype(np.intp), units.annotator, units.label,
                     units.lengths[units.doc] - units.end, units.lengths[units.doc] - units.start,
                     units.docs[::-1], units.annotators, units.labels, units.present[::-1], units.lengths[::-1])
    a, b = quiet(unitizing_alpha, units), quiet(unitizing_alpha, mirrored)
    assert (a.value, a.observed, a.expected) == pytest.approx((b.value, b.observed, b.expected), nan_ok=True,
                                                              rel=1e-9)
    ua, ub = quiet(u_alpha, units), quiet(u_alpha, mirrored)
    assert (ua.value, ua.binary, ua.coding) == pytest.approx((ub.value, ub.binary, ub.coding), nan_ok=True, rel=1e-9)


@pytest.mark.parametrize("case", range(6))
def test_1995_equals_dkpro_agreement(case):
    # DKPro Agreement's KrippendorffAlphaUnitizingAgreement on random projects of 2 to 4 coders and 1 to 3 tasks laid
    # end to end, recorded by tests/data/dkpro_unitizing_reference.py.
    recorded = json.loads((DATA / "dkpro_unitizing_reference.json").read_text())["cases"][case]
    frame = pd.DataFrame(recorded["units"], columns=["doc", "start", "end", "annotator", "label"])
    present = pd.DataFrame([(d, a) for d in range(len(recorded["lengths"])) for a in range(recorded["coders"])],
                           columns=["doc", "annotator"])
    units = units_from_frame(frame, present=present, lengths=dict(enumerate(recorded["lengths"])))
    assert units.docs == tuple(range(len(recorded["lengths"])))
    result = unitizing_alpha(units)
    dkpro = recorded["dkpro"]
    assert (result.value, result.observed, result.expected) == pytest.approx(
        (dkpro["*"]["alpha"], dkpro["*"]["observed"], dkpro["*"]["expected"]), rel=1e-9)
    for label, row in result.per_label.iterrows():
        assert (row["value"], row["observed"], row["expected"]) == pytest.approx(
            (dkpro[label]["alpha"], dkpro[label]["observed"], dkpro[label]["expected"]), rel=1e-9)


def test_a_blank_free_continuum_coded_alike_by_four_coders_leaves_binary_u_alpha_undefined():
    """Found by the property test above: four identical coders whose units cover the whole continuum have no blank
    position, so |uα's expected disagreement is 0; summed in floating point it came out as 7.9e-16, and |uα as 2.0."""
    n = 4
    units = Units(doc=np.zeros(3 * n, int), annotator=np.repeat(np.arange(n), 3), label=np.zeros(3 * n, int),
                  start=np.tile([0.0, 2.0, 1.0], n), end=np.tile([1.0, 18.0, 2.0], n), docs=("doc0",),
                  annotators=tuple(f"ann{k}" for k in range(n)), labels=("L0",), present=np.ones((1, n), bool),
                  lengths=np.array([18.0]))
    with pytest.warns(UndefinedMeasureWarning, match="the expected disagreement is 0"):
        result = u_alpha(units)
    assert np.isnan(result.binary) and np.isnan(result.value)
