"""Krippendorff's unitizing alphas: the 1995/2004 form and the 2016 family (uα, |uα, cuα).

Both read a :class:`~agreement.units.Units`. A continuum is ``[0, length)``;
the project's continua are laid end to end in the order of ``units.docs``, as
INCEpTION does, so that the project has one coefficient (and one expected
disagreement) rather than one per task.

Which question each answers
---------------------------
- :func:`unitizing_alpha` (Krippendorff 1995, "On the reliability of
  unitizing continuous data", Sociological Methodology 25; Content Analysis,
  2nd ed. 2004, §11.6): *one coefficient per label* for unitizing and coding
  together: do the coders put units of this label in the same places with the
  same extent? The overall value averages the labels' observed and expected
  disagreements, as DKPro Agreement and INCEpTION do. It was built for two
  coders and **misbehaves with more** (Krippendorff et al. 2016, who replace
  it by uα): each pair of coders is scored on its own, squared boundary
  differences and all, and the pairs are averaged, so what a third coder did
  never enters a pair's comparison.
- :func:`u_alpha` (Krippendorff, Mathet, Bouvry & Widlöcher 2016, "On the
  reliability of unitizing textual continua: Further developments", Quality &
  Quantity 50; Content Analysis, 4th ed. 2019, §12.6): a coincidence matrix of
  the values (labels and the blank ∅) that every pair of coders gives each
  position, from which

  - ``value`` (uα): unitizing and coding all in, any number of coders;
  - ``binary`` (|uα): only whether a position is in a unit or not, the
    boundaries without the labels;
  - ``coding`` (cuα): only the labels of the positions both coders put in a
    unit, the coding of the overlapping units given that they overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from agreement.intervals import merge_overlaps, overlapping_pairs
from agreement.ranges import block_edges
from agreement.undefined import warn_undefined
from agreement.units import Units

__all__ = ["UAlpha", "UnitizingAlpha", "u_alpha", "unitizing_alpha"]


@dataclass(frozen=True)
class UnitizingAlpha:
    """Krippendorff's 1995 unitizing alpha, overall and per label.

    Attributes
    ----------
    value, observed, expected : float
        :math:`1 - D_o / D_e`, with :math:`D_o` and :math:`D_e` the means over labels.
    per_label : pandas.DataFrame
        Index: the labels that have units; columns ``value``, ``observed``, ``expected``.
    """

    value: float
    observed: float
    expected: float
    per_label: pd.DataFrame


@dataclass(frozen=True)
class UAlpha:
    """The 2016 unitizing alphas of one project.

    Attributes
    ----------
    value : float
        uα: labels and the blank, all in.
    binary : float
        |uα: in a unit or not, labels set aside.
    coding : float
        cuα: the labels of positions that two coders both put in units.
    observed, expected : float
        uα's observed and expected disagreement.
    coincidences : pandas.DataFrame
        The observed coincidences (in units of length), labels and ``"∅"``.
    """

    value: float
    binary: float
    coding: float
    observed: float
    expected: float
    coincidences: pd.DataFrame


def _merged_units(units: Units, *, by_label: bool) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp],
                                                             NDArray[np.float64], NDArray[np.float64]]:
    """Each annotator's units on each continuum (of each label, if ``by_label``), overlapping ones merged."""
    n_ann, n_lab = len(units.annotators), max(len(units.labels), 1)
    label = units.label if by_label else np.zeros(units.n_units, dtype=np.intp)
    key = (units.doc.astype(np.int64) * n_ann + units.annotator) * n_lab + label
    key, start, end = merge_overlaps(key, units.start, units.end)
    return ((key // n_lab) // n_ann).astype(np.intp), ((key // n_lab) % n_ann).astype(np.intp), \
        (key % n_lab).astype(np.intp), start, end


def unitizing_alpha(units: Units) -> UnitizingAlpha:
    """Krippendorff's (1995, 2004) unitizing alpha, per label and overall, as DKPro Agreement computes it.

    For a label :math:`c`, each coder's continuum is cut into its units of
    :math:`c` and the gaps between them. With :math:`m` coders on a continuum
    of length :math:`L`, segments :math:`g` of coder :math:`i` and :math:`h`
    of coder :math:`j` (beginning :math:`b`, length :math:`l`) differ by

    .. math::

        \\delta^2_{cigjh} = \\begin{cases}
            (b_g - b_h)^2 + (b_g + l_g - b_h - l_h)^2 & \\text{both units of } c \\text{, overlapping} \\\\
            l_g^2 & g \\text{ a unit inside the gap } h \\\\
            l_h^2 & h \\text{ a unit inside the gap } g \\\\
            0 & \\text{otherwise}
        \\end{cases}

    .. math::

        {}_cD_o = \\frac{\\sum_i \\sum_{j \\ne i} \\sum_g \\sum_h \\delta^2_{cigjh}}{m (m - 1) L^2}, \\qquad
        {}_cD_e = \\frac{2}{L} \\,
            \\frac{\\sum_{g \\in c} \\left[ \\frac{N_c - 1}{3} (2 l_g^3 - 3 l_g^2 + l_g)
                   + l_g^2 \\sum_{h \\text{ gap}, l_h \\ge l_g} (l_h - l_g + 1) \\right]}
                  {m L (m L - 1) - \\sum_{g \\in c} l_g (l_g - 1)}

    with :math:`N_c` the number of units of :math:`c`, and
    :math:`{}_c\\alpha = 1 - {}_cD_o / {}_cD_e`. Overall, as in DKPro
    Agreement, :math:`D_o` and :math:`D_e` are the means over the labels
    that have units. Positions are whole (characters): the :math:`-1` and
    :math:`+1` count positions, so for seconds of audio the unit of length
    matters.

    Conventions (DKPro Agreement's where it has one):

    - the project's continua are laid end to end; a gap runs on from one task
      into the next (INCEpTION's convention), and a coder with no unit of
      :math:`c` has one gap the length of the continuum;
    - one coder's units of one label that overlap are merged into their union
      (the 1995 form assumes they do not overlap); units that only touch stay
      two units;
    - a coder who did not annotate a task is not part of it: the pairs'
      observed disagreement is taken over the tasks both annotated and
      normalised by :math:`L \\sum_{i \\ne j} L_{ij}` (:math:`L_{ij}` the
      length both annotated, :math:`m(m-1)L^2` when all annotated all), and
      :math:`mL` in :math:`D_e` is the total length the coders annotated;
    - a label whose :math:`D_e` is 0 has NaN (DKPro returns 0), with a warning.

    Parameters
    ----------
    units : Units

    Returns
    -------
    UnitizingAlpha

    Notes
    -----
    Built for two coders. With more it averages pairs that each see only
    their own two segmentations; Krippendorff et al. (2016) found it
    misbehaves there and replaced it by :func:`u_alpha`, which pairs every
    position's values across all coders. Prefer uα with three or more coders.
    The only Python loop is over the labels (the gaps of each label are
    sorted once); everything over units is vectorised.

    Examples
    --------
    DKPro Agreement's small example (UnitizingAgreementTest; L = 10): one
    coder marks [1, 9), the other [2, 3), [4, 5), [6, 7).

    >>> from agreement.units import units_from_frame
    >>> frame = pd.DataFrame({"doc": 0, "annotator": ["r0", "r1", "r1", "r1"], "label": "A",
    ...                       "start": [1, 2, 4, 6], "end": [9, 3, 5, 7]})
    >>> result = unitizing_alpha(units_from_frame(frame, lengths={0: 10}))
    >>> round(result.value, 4), round(result.observed, 4), round(result.expected, 5)
    (-0.7003, 0.91, 0.53519)
    """
    doc, ann, lab, start, end = _merged_units(units, by_label=True)
    labels = np.unique(lab)
    if len(labels) == 0:
        nan = warn_undefined("Krippendorff's unitizing alpha", "no coder marked a unit")
        return UnitizingAlpha(nan, nan, nan, _label_table([], [], [], []))
    n_ann, n_lab = len(units.annotators), len(units.labels)
    present = units.present
    lengths = units.lengths
    n_present = present.sum(axis=1)
    total_length = float(lengths.sum())
    length = end - start

    # observed: overlapping units of two coders, and units inside another coder's gap
    first, second, _ = overlapping_pairs(doc.astype(np.int64) * n_lab + lab, ann, start, end)
    delta = (start[first] - start[second]) ** 2 + (end[first] - end[second]) ** 2
    unit_unit = np.bincount(lab[first], weights=delta, minlength=n_lab)
    overlapped = np.unique(np.concatenate([first * n_ann + ann[second], second * n_ann + ann[first]]))
    others_overlapping = np.bincount(overlapped // n_ann, minlength=len(start))
    in_gaps = n_present[doc] - 1 - others_overlapping
    unit_gap = np.bincount(lab, weights=length ** 2 * in_gaps, minlength=n_lab)
    pairable = float(np.sum(n_present * (n_present - 1) * lengths))
    if pairable == 0:
        nan = warn_undefined("Krippendorff's unitizing alpha", "no task of positive length was annotated by two coders")
        names = [units.labels[c] for c in labels]
        return UnitizingAlpha(nan, nan, nan, _label_table(names, [nan] * len(names), [nan] * len(names),
                                                          [nan] * len(names)))
    observed = 2.0 * (unit_unit + unit_gap) / (total_length * pairable)

    # expected: each coder's continuum is the tasks they annotated, end to end; its gaps per label
    annotated = present * lengths[:, None]
    offset = np.cumsum(annotated, axis=0) - annotated  # where task d begins on coder a's continuum
    coder_length = annotated.sum(axis=0)
    position = offset[doc, ann]
    gaps_label, gaps = _gaps(lab, ann, start + position, end + position, coder_length, n_lab, n_ann)
    coded_length = float(coder_length.sum())
    expected = np.zeros(n_lab)
    for c in labels:  # one pass per label: the gap lengths of each label are sorted once
        mine = lab == c
        l_c = length[mine]
        g = np.sort(gaps[gaps_label == c])
        suffix_count = len(g) - np.searchsorted(g, l_c, side="left")
        suffix_sum = np.r_[np.cumsum(g[::-1])[::-1], 0.0][np.searchsorted(g, l_c, side="left")]
        fits = suffix_sum - (l_c - 1.0) * suffix_count
        numerator = np.sum((len(l_c) - 1.0) * (2 * l_c ** 3 - 3 * l_c ** 2 + l_c) / 3.0 + l_c ** 2 * fits)
        denominator = coded_length * (coded_length - 1.0) - np.sum(l_c * (l_c - 1.0))
        expected[c] = 2.0 / total_length * numerator / denominator if denominator > 0 else 0.0

    observed, expected = observed[labels], expected[labels]
    names = [units.labels[c] for c in labels]
    undefined = expected == 0
    if np.any(undefined):
        warn_undefined("Krippendorff's unitizing alpha of a label",
                       f"the expected disagreement of {[n for n, u in zip(names, undefined, strict=True) if u]} is 0")
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(undefined, np.nan, 1.0 - observed / np.where(undefined, 1.0, expected))
    d_o, d_e = float(observed.mean()), float(expected.mean())
    value = 1.0 - d_o / d_e if d_e > 0 else warn_undefined("Krippendorff's unitizing alpha",
                                                           "the expected disagreement is 0")
    return UnitizingAlpha(value, d_o, d_e, _label_table(names, values, observed, expected))


def _label_table(names, values, observed, expected) -> pd.DataFrame:
    return pd.DataFrame({"value": np.asarray(values, float), "observed": np.asarray(observed, float),
                         "expected": np.asarray(expected, float)}, index=pd.Index(names, name="label", dtype=object))


def _gaps(lab: NDArray[np.intp], ann: NDArray[np.intp], start: NDArray[np.float64], end: NDArray[np.float64],
          coder_length: NDArray[np.float64], n_lab: int, n_ann: int) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """The gaps (label, length) of every coder's continuum between its units of each label.

    None has length 0.
    """
    key = lab.astype(np.int64) * n_ann + ann
    order = np.lexsort((start, key))
    key, start, end = key[order], start[order], end[order]
    first = np.r_[True, key[1:] != key[:-1]]
    last = np.r_[key[1:] != key[:-1], True]
    before = np.where(first, start, start - np.r_[0.0, end[:-1]])  # gap before each unit
    after_last = coder_length[key[last] % n_ann] - end[last]
    # coders with no unit of a label: one gap over their whole continuum
    has = np.zeros(n_lab * n_ann, dtype=bool)
    has[key] = True
    empty = np.flatnonzero(~has & (np.tile(coder_length, n_lab) > 0))
    labels = np.concatenate([key // n_ann, key[last] // n_ann, empty // n_ann])
    lengths = np.concatenate([before, after_last, coder_length[empty % n_ann]])
    keep = lengths > 0
    return labels[keep].astype(np.intp), lengths[keep]


def u_alpha(units: Units) -> UAlpha:
    """Krippendorff, Mathet, Bouvry & Widlöcher's (2016) uα, |uα and cuα.

    Every coder's continuum is a sequence of segments, each a unit with a
    label or a stretch of blank (∅). For two coders :math:`i \\ne j`, every
    position where :math:`i` has value :math:`c` and :math:`j` value
    :math:`k` is one pairable coincidence; on a task annotated by
    :math:`m_d` coders each counts :math:`1 / (m_d - 1)`:

    .. math::

        o_{ck} = \\sum_d \\frac{1}{m_d - 1} \\sum_i \\sum_{j \\ne i} \\sum_g \\sum_h |s_{ig} \\cap s_{jh}|,
        \\qquad l_{c\\cdot} = \\sum_k o_{ck}, \\quad l_{\\cdot\\cdot} = \\sum_c l_{c\\cdot}

    Units are pairable only as wholes, blanks position by position, so

    .. math::

        e_{ck} = l_{\\cdot\\cdot} \\,
            \\frac{l_{c\\cdot} l_{\\cdot k} - [c = k] \\sum_{s \\in c} w_s}{l_{\\cdot\\cdot}^2 - \\sum_s w_s},
        \\qquad w_s = l_s^2 \\text{ for a unit}, \\; l_s \\text{ for a blank}

    and :math:`u\\alpha = 1 - (l_{\\cdot\\cdot} - \\sum_c o_{cc}) / (l_{\\cdot\\cdot} - \\sum_c e_{cc})`
    (the nominal metric). |uα is the same with every label one value (the
    units of a coder merged where they overlap); cuα is Krippendorff's alpha
    of the coincidences between labels only (rows and columns of ∅ dropped),
    :math:`e_{ck} = n_c (n_k - [c = k]) / (n - 1)`, the coding of the
    positions two coders both put in units.

    Parameters
    ----------
    units : Units
        A coder's units of one label that overlap are merged; units of
        different labels may overlap (their positions then carry both values).
        Tasks annotated by fewer than two coders are not pairable and left out.

    Returns
    -------
    UAlpha
        Each coefficient is NaN (with a warning) where its expected
        disagreement is 0, e.g. cuα when only one label is used.

    Examples
    --------
    Two coders who agree on one unit and disagree on where a second ends (five
    positions one calls Y and the other blank):

    >>> from agreement.units import units_from_frame
    >>> frame = pd.DataFrame({"doc": 0, "annotator": ["a", "a", "b", "b"], "label": ["X", "Y", "X", "Y"],
    ...                       "start": [0, 10, 0, 10], "end": [5, 20, 5, 15]})
    >>> result = u_alpha(units_from_frame(frame, lengths={0: 20}))
    >>> round(result.value, 4), round(result.binary, 4), result.coding
    (0.6643, 0.53, 1.0)
    """
    n_lab = len(units.labels)
    doc, ann, lab, start, end = _merged_units(units, by_label=True)
    udoc, uann, _, ustart, uend = _merged_units(units, by_label=False)
    n_present = units.present.sum(axis=1)
    weight = np.where(n_present > 1, 1.0 / np.maximum(n_present - 1, 1), 0.0)
    lengths = units.lengths

    # The coincidences are sums over the continua: found a block of continua at a time (both kinds of merged
    # units come sorted by continuum), so that the pairs of overlapping units are never held for all at once.
    coincidences = np.zeros((n_lab + 1, n_lab + 1))
    unit_unit = covered = 0.0
    per_continuum = np.bincount(doc, minlength=len(lengths)) + np.bincount(udoc, minlength=len(lengths))
    edges = block_edges(per_continuum, at_most=UNITS_AT_ONCE)
    at, uat = np.searchsorted(doc, edges).tolist(), np.searchsorted(udoc, edges).tolist()
    for lo, hi, ulo, uhi in zip(at[:-1], at[1:], uat[:-1], uat[1:], strict=True):
        part, both, cover = _coincidences(doc[lo:hi], ann[lo:hi], lab[lo:hi], start[lo:hi], end[lo:hi],
                                          udoc[ulo:uhi], uann[ulo:uhi], ustart[ulo:uhi], uend[ulo:uhi],
                                          n_present=n_present, weight=weight, n_lab=n_lab)
        coincidences += part
        unit_unit += both
        covered += cover
    # blank against blank, from the coders' unions: |B_i ∩ B_j| = L - |U_i| - |U_j| + |U_i ∩ U_j|
    unit_blank = covered - unit_unit
    blank_blank = np.sum(weight * n_present * (n_present - 1) * lengths) - 2.0 * covered + unit_unit
    binary = np.array([[unit_unit, unit_blank], [unit_blank, blank_blank]])
    coincidences[n_lab, n_lab] = binary[1, 1]

    pairable = weight[doc] > 0
    unit_weights = np.bincount(lab[pairable], weights=(end - start)[pairable] ** 2, minlength=n_lab)
    blank = np.sum(weight * n_present * (n_present - 1) * lengths) - binary[0].sum()  # blank positions counted
    value, d_o, d_e = _u_alpha_from(coincidences, np.r_[unit_weights, blank], "Krippendorff's uα")
    upairable = weight[udoc] > 0
    binary_weights = np.r_[np.sum((uend - ustart)[upairable] ** 2), blank]
    binary_value, _, _ = _u_alpha_from(binary, binary_weights, "Krippendorff's |uα")
    coding = _coding_alpha(coincidences[:n_lab, :n_lab])
    table = pd.DataFrame(coincidences, index=pd.Index([*units.labels, "∅"], dtype=object),
                         columns=pd.Index([*units.labels, "∅"], dtype=object))
    return UAlpha(value, binary_value, coding, d_o, d_e, table)


ROUNDING = 1e-12
"""An expected disagreement (a share of pairable positions) at most this is 0 up to floating-point rounding: the
binary coincidences are differences of sums over the continua, where a 0 can come out as a few 1e-16."""


UNITS_AT_ONCE = 1_000_000
"""Merged units whose overlapping pairs are found at once at most (a project's continua are taken in blocks)."""


def _coincidences(doc, ann, lab, start, end, udoc, uann, ustart, uend, *, n_present, weight,
                  n_lab) -> tuple[NDArray[np.float64], float, float]:
    r"""One block of continua's share of uα's coincidences.

    Labels against labels and units against blanks (the blank-blank cell left 0), the units-in-units
    coincidences of |uα, and :math:`\sum_d (m_d - 1) w_d \sum_i |U_i|` (its unions' covered lengths), from which
    the caller finds |uα's other cells.
    """
    # Overlapping intervals of two coders, found once among the units and the unions together: the pairs of two
    # units, of a unit and a union, and of two unions are each what a search among those alone would give, in
    # the same order (one stable sort of all of them keeps each part's order).
    n_units = len(start)
    f2, s2, inter2 = overlapping_pairs(np.r_[doc, udoc].astype(np.int64), np.r_[ann, uann],
                                       np.r_[start, ustart], np.r_[end, uend])
    unit_first, unit_second = f2 < n_units, s2 < n_units
    # labels against labels: overlapping units of two coders, both orders
    units_only = unit_first & unit_second
    first, second, inter = f2[units_only], s2[units_only], inter2[units_only]
    w = weight[doc[first]] * inter
    coincidences = np.zeros((n_lab + 1, n_lab + 1))
    np.add.at(coincidences, (lab[first], lab[second]), w)
    np.add.at(coincidences, (lab[second], lab[first]), w)
    # a unit against another coder's blank: its length less its overlap with that coder's units (their union)
    mixed = unit_first != unit_second
    unit = np.where(unit_first, f2, s2)[mixed]
    covered = np.bincount(unit, weights=inter2[mixed], minlength=n_units)
    unit_blank = weight[doc] * ((n_present[doc] - 1) * (end - start) - covered)
    coincidences[:n_lab, n_lab] = np.bincount(lab, weights=unit_blank, minlength=n_lab)
    coincidences[n_lab, :n_lab] = coincidences[:n_lab, n_lab]
    # in a unit against in a unit, for |uα: the coders' unions that overlap
    unions_only = ~(unit_first | unit_second)
    unions = (f2[unions_only] - n_units).astype(np.intp)
    unit_unit = 2.0 * np.sum(weight[udoc[unions]] * inter2[unions_only])
    covers = float(np.sum((n_present[udoc] - 1) * (uend - ustart) * weight[udoc]))
    return coincidences, float(unit_unit), covers


def _u_alpha_from(coincidences: NDArray[np.float64], weights: NDArray[np.float64],
                  measure: str) -> tuple[float, float, float]:
    """uα (nominal) from observed coincidences and the pairing weights of each value's segments."""
    n = coincidences.sum()
    margin = coincidences.sum(axis=1)
    denominator = n ** 2 - weights.sum()
    if n == 0 or denominator <= 0:
        nan = warn_undefined(measure, "no position is pairable")
        return nan, nan, nan
    expected_diagonal = n * (margin ** 2 - weights) / denominator
    d_o = (n - np.trace(coincidences)) / n
    d_e = (n - expected_diagonal.sum()) / n
    if d_e <= ROUNDING:  # coincidences found by differences of sums: a zero may come out as 1e-16
        return warn_undefined(measure, "the expected disagreement is 0"), float(d_o), float(d_e)
    return float(1.0 - d_o / d_e), float(d_o), float(d_e)


def _coding_alpha(coincidences: NDArray[np.float64]) -> float:
    """Krippendorff's alpha (nominal) of a coincidence matrix: cuα on the labels' coincidences."""
    n = coincidences.sum()
    margin = coincidences.sum(axis=1)
    if n <= 1:
        return warn_undefined("Krippendorff's cuα", "no two coders put a position in units of labels")
    d_o = (n - np.trace(coincidences)) / n
    d_e = (n ** 2 - np.sum(margin ** 2)) / (n * (n - 1))
    if d_e <= 0:
        return warn_undefined("Krippendorff's cuα", "the positions two coders put in units all have one label")
    return float(1.0 - d_o / d_e)
