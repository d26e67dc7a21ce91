"""The best alignment (Mathet et al. 2015, §4) and the optimal grouping of overlapping spans, against brute force."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from agreement.alignment import (
    SMALL_ASSIGNMENT,
    alignment_totals,
    best_alignment,
    best_alignments,
    jaccard_matrix,
    match_overlapping,
)
from tests.agreement.strategies import set_partitions
from tests.profiles import examples


def brute_force_disorder(annotator, matrix, n_annotators, delta_empty):
    """The least total disorder over every partition of the units into unitary alignments."""
    pairs = n_annotators * (n_annotators - 1) // 2
    best = np.inf
    for partition in set_partitions(list(range(len(annotator)))):
        if any(len({annotator[u] for u in block}) < len(block) for block in partition):
            continue
        total = 0.0
        for block in partition:
            inside = sum(matrix[u, v] for u, v in combinations(block, 2))
            empty = (pairs - len(block) * (len(block) - 1) // 2) * delta_empty
            total += (inside + empty) / pairs
        best = min(best, total)
    return best


@st.composite
def continua(draw, *, min_annotators=2, max_annotators=4, max_units=7, max_cost=3.0):
    """A continuum's annotator codes and a symmetric non-negative dissimilarity between its units."""
    n_annotators = draw(st.integers(min_annotators, max_annotators))
    n_units = draw(st.integers(0, max_units))
    annotator = np.array(draw(st.lists(st.integers(0, n_annotators - 1), min_size=n_units, max_size=n_units)))
    values = draw(st.lists(st.floats(0, max_cost, allow_nan=False), min_size=n_units * n_units,
                           max_size=n_units * n_units))
    matrix = np.array(values, dtype=float).reshape(n_units, n_units)
    matrix = (matrix + matrix.T) / 2
    np.fill_diagonal(matrix, 0.0)
    return annotator.astype(np.intp), matrix, n_annotators


def test_an_annotator_without_units_adds_empty_units():
    # three annotators, the third marked nothing: the pair costs (0.25 + 1 + 1) / 3
    alignment = best_alignment([0, 1], [[0, 0.25], [0.25, 0]], n_annotators=3)
    assert alignment.group.tolist() == [0, 0]
    assert alignment.total == pytest.approx(2.25 / 3)


@settings(max_examples=examples(60), deadline=None)
@given(continua(min_annotators=2, max_annotators=2, max_units=8))
def test_two_annotators_assignment_equals_the_mixed_integer_program(continuum):
    annotator, matrix, n = continuum
    assignment = best_alignment(annotator, matrix, n_annotators=n)
    program = best_alignment(annotator, matrix, n_annotators=n, method="milp")
    assert assignment.total == pytest.approx(program.total, abs=1e-9)


@pytest.mark.parametrize("n_units", [12, 60])
def test_two_annotators_of_many_tangled_units_equal_the_mixed_integer_program(n_units):
    # units on a line, each near its neighbours of the other annotator: one padded assignment up to
    # SMALL_ASSIGNMENT units, a search for components beyond
    rng = np.random.default_rng(n_units)
    position = np.sort(rng.uniform(0, n_units / 2, n_units))
    annotator = (np.arange(n_units) % 2).astype(np.intp)
    matrix = np.abs(position[:, None] - position[None, :]) * 1.5
    np.fill_diagonal(matrix, 0.0)
    assert (n_units <= SMALL_ASSIGNMENT) == (n_units == 12)
    assignment = best_alignment(annotator, matrix, n_annotators=2)
    program = best_alignment(annotator, matrix, n_annotators=2, method="milp")
    assert assignment.total == pytest.approx(program.total, abs=1e-9)
    assert alignment_totals(annotator, [n_units], matrix.ravel(), n_annotators=2).tolist() == pytest.approx(
        [program.total], abs=1e-9)


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(continua(min_annotators=3), min_size=1, max_size=6))
def test_a_corpus_solved_in_several_programs_equals_one_program(corpus):
    # continua are independent: cutting the corpus into programs of a few groups changes no continuum's optimum
    whole = best_alignments(corpus)
    cut = best_alignments(corpus, program_groups=3)
    assert [a.total for a in cut] == pytest.approx([a.total for a in whole], abs=1e-9)
    assert [a.total for a in whole] == pytest.approx([brute_force_disorder(*c, 1.0) for c in corpus], abs=1e-9)


@settings(max_examples=examples(80), deadline=None)
@given(st.tuples(st.integers(2, 3), st.sampled_from([3.0, 12.0])).flatmap(
    lambda drawn: st.lists(continua(min_annotators=drawn[0], max_annotators=drawn[0], max_cost=drawn[1]),
                           min_size=1, max_size=8)),
       st.sampled_from([0.5, 1.0, 2.0]))
def test_totals_of_continua_end_to_end_equal_each_ones_best_alignment(corpus, delta_empty):
    # the vectorised two-annotator pairing (and its fallback where a unit has two near partners) and the batched
    # programs of continua cut where units are out of each other's reach (costs up to 12: many are) give each
    # continuum's optimum, as the per-continuum solver and brute force do
    corpus = [c for c in corpus if len(c[0])] or [(np.array([0]), np.zeros((1, 1)), corpus[0][2])]
    n = corpus[0][2]
    totals = alignment_totals(np.concatenate([who for who, _, _ in corpus]), [len(who) for who, _, _ in corpus],
                              np.concatenate([matrix.ravel() for _, matrix, _ in corpus]), n_annotators=n,
                              delta_empty=delta_empty)
    expected = [a.total for a in best_alignments(corpus, delta_empty=delta_empty)]
    assert totals.tolist() == pytest.approx(expected, abs=1e-9)
    assert totals.tolist() == pytest.approx([brute_force_disorder(*c, delta_empty) for c in corpus], abs=1e-9)


def test_totals_of_a_continuum_out_of_reach_of_itself_are_its_parts_totals():
    # three annotators (reach (2 + 3) Δ∅ = 5): two clusters 100 apart, and a unit 6 from everything, which stands
    # alone (Δ∅); the continuum's total is its parts' totals
    cluster = np.array([[0.0, 0.3, 1.2], [0.3, 0.0, 0.6], [1.2, 0.6, 0.0]])
    other = np.array([[0.0, 2.0], [2.0, 0.0]])
    whole = np.full((6, 6), 100.0)
    whole[:3, :3], whole[3:5, 3:5] = cluster, other
    whole[5, :5] = whole[:5, 5] = 6.0
    whole[5, 5] = 0.0
    who = np.array([0, 1, 2, 0, 2, 1])
    parts = alignment_totals(np.concatenate([who[:3], who[3:5], who[5:]]), [3, 2, 1],
                             np.concatenate([cluster.ravel(), other.ravel(), [0.0]]), n_annotators=3)
    assert parts[2] == 1.0
    assert alignment_totals(who, [6], whole.ravel(), n_annotators=3).tolist() == pytest.approx([parts.sum()])
    assert parts.sum() == pytest.approx(brute_force_disorder(who, whole, 3, 1.0))


def test_totals_of_two_annotators_fall_back_where_a_unit_has_two_near_partners():
    # A's unit is near both of B's: the pairing must choose the cheaper (0.5), leaving B's other unit alone (1.0)
    matrix = np.array([[0.0, 0.5, 0.9], [0.5, 0.0, 3.0], [0.9, 3.0, 0.0]])
    simple = np.array([[0.0, 0.25], [0.25, 0.0]])
    totals = alignment_totals([0, 1, 1, 0, 1], [3, 2], np.concatenate([matrix.ravel(), simple.ravel()]),
                              n_annotators=2)
    assert totals.tolist() == [1.5, 0.25]


def test_totals_refuse_costs_that_do_not_match_the_continua():
    with pytest.raises(ValueError, match="do not match"):
        alignment_totals([0, 1], [2], [0.0, 1.0, 1.0], n_annotators=2)
    with pytest.raises(ValueError, match="at least one unit"):
        alignment_totals([], [0], [], n_annotators=2)
    with pytest.raises(ValueError, match="range\\(2\\)"):
        alignment_totals([0, 2], [2], [0.0] * 4, n_annotators=2)


@settings(max_examples=examples(60), deadline=None)
@given(continua(), st.sampled_from([0.5, 1.0, 2.0]))
def test_best_alignment_equals_brute_force(continuum, delta_empty):
    annotator, matrix, n = continuum
    alignment = best_alignment(annotator, matrix, n_annotators=n, delta_empty=delta_empty)
    assert alignment.total == pytest.approx(brute_force_disorder(annotator, matrix, n, delta_empty), abs=1e-9)
    # a partition: every unit in one unitary alignment, at most one unit per annotator in each
    assert (alignment.group >= 0).all()
    for g in np.unique(alignment.group):
        assert len(set(annotator[alignment.group == g])) == int((alignment.group == g).sum())


@st.composite
def span_sets(draw, *, min_annotators=2, max_annotators=4, max_units=7):
    n_annotators = draw(st.integers(min_annotators, max_annotators))
    n_units = draw(st.integers(1, max_units))
    annotator = draw(st.lists(st.integers(0, n_annotators - 1), min_size=n_units, max_size=n_units))
    start = draw(st.lists(st.integers(0, 20), min_size=n_units, max_size=n_units))
    length = draw(st.lists(st.integers(1, 10), min_size=n_units, max_size=n_units))
    return np.array(annotator), np.array(start, dtype=float), np.array(start, dtype=float) + np.array(length)


def matched_overlap(group, annotator, overlap, threshold):
    """Total Jaccard inside groups, after checking that the groups are valid."""
    total = 0.0
    for g in np.unique(group):
        units = np.flatnonzero(group == g)
        assert len(set(annotator[units])) == len(units)
        for u, v in combinations(units, 2):
            assert overlap[u, v] >= threshold
            total += overlap[u, v]
    return total


@settings(max_examples=examples(80), deadline=None)
@given(span_sets(min_annotators=2, max_annotators=2, max_units=10), st.sampled_from([0.1, 0.5, 0.8]))
def test_two_annotators_overlap_matching_equals_linear_sum_assignment(spans, threshold):
    annotator, start, end = spans
    overlap = jaccard_matrix(start, end)
    group = match_overlapping(annotator, start, end, jaccard=threshold)
    first, second = np.flatnonzero(annotator == 0), np.flatnonzero(annotator == 1)
    score = overlap[np.ix_(first, second)]
    score = np.where(score >= threshold, score, 0.0)
    rows, cols = linear_sum_assignment(score, maximize=True)
    assert matched_overlap(group, annotator, overlap, threshold) == pytest.approx(score[rows, cols].sum(), abs=1e-9)


@settings(max_examples=examples(60), deadline=None)
@given(span_sets(min_annotators=3, max_annotators=4), st.sampled_from([0.1, 0.5]))
def test_overlap_matching_equals_brute_force(spans, threshold):
    annotator, start, end = spans
    overlap = jaccard_matrix(start, end)
    best = 0.0
    for partition in set_partitions(list(range(len(annotator)))):
        ok = all(len({annotator[u] for u in block}) == len(block)
                 and all(overlap[u, v] >= threshold for u, v in combinations(block, 2)) for block in partition)
        if ok:
            best = max(best, sum(overlap[u, v] for block in partition for u, v in combinations(block, 2)))
    group = match_overlapping(annotator, start, end, jaccard=threshold)
    assert matched_overlap(group, annotator, overlap, threshold) == pytest.approx(best, abs=1e-9)


def test_overlap_matching_beats_a_greedy_order():
    # A0 [0, 10), A1 [0, 8); B0 [0, 9), B1 [2, 10); threshold 0.7. Jaccard: A0-B0 0.9, A0-B1 0.8, A1-B0 0.889,
    # A1-B1 0.6. Greedy, best pair first, takes A0-B0 and leaves A1 and B1 apart (0.9, one pair); the optimal
    # matching takes A0-B1 and A1-B0 (1.689, two pairs).
    annotator, start, end = np.array([0, 0, 1, 1]), np.array([0, 0, 0, 2.0]), np.array([10, 8, 9, 10.0])
    group = match_overlapping(annotator, start, end, jaccard=0.7)
    assert group[0] == group[3] and group[1] == group[2] and group[0] != group[1]


def test_labels_keep_spans_apart():
    group = match_overlapping([0, 1], [0, 0], [10, 10], label=["PER", "LOC"])
    assert group.tolist() == [0, 1]


def test_matching_refuses_a_threshold_outside_the_unit_interval():
    with pytest.raises(ValueError, match="Jaccard threshold"):
        match_overlapping([0, 1], [0, 0], [1, 1], jaccard=0.0)
