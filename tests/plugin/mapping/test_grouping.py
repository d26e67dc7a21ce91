"""Regions grouped into items by the grouping of greatest total similarity, not by a greedy order."""

import itertools
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.annotations import Skips, Submission
from plugin.labelconfig import Control
from plugin.mapping import grouping
from plugin.mapping.grouping import best_groups
from plugin.mapping.regions import span_jaccard
from plugin.settings import MappingOptions
from tests.agreement.strategies import set_partitions
from tests.plugin.conftest import map_one


def span(annotator, start, end, label="PER", rid=None):
    value = {"from_name": "ner", "type": "labels", "value": {"start": start, "end": end, "labels": [label]}}
    if rid is not None:
        value["id"] = rid
    return value


def test_the_optimum_matches_where_most_similar_first_blocks_two_matches():
    # A [8, 28) and B [10, 30) are the most similar pair (Jaccard 18/22 = 0.818). Taking it first, as a greedy
    # order does, leaves A [16, 36) and B [2, 22) (6/34) apart: three items, total 0.818. Matching A [8, 28) with
    # B [2, 22) (14/26 = 0.538) and A [16, 36) with B [10, 30) (14/26) gives two items, total 1.077.
    control = Control("ner", "labels", labels=("PER", "ORG"))
    submissions = {1: [Submission(1, 1, "a", (span("a", 8, 28), span("a", 16, 36, "ORG"))),
                       Submission(1, 2, "b", (span("b", 2, 22), span("b", 10, 30, "ORG")))]}
    mapped = map_one({"ner": control}, submissions, "ner", MappingOptions(span_alignment="overlap"), Skips())
    # each item is named by its first region in sort order, as before: B [2, 22) and B [10, 30)
    assert sorted(mapped.records) == sorted([
        (1, "1:2-22", "a", "PER"), (1, "1:2-22", "b", "PER"),
        (1, "1:10-30", "a", "ORG"), (1, "1:10-30", "b", "ORG"),
    ])


def _valid(group, annotators, candidates):
    return (len({annotators[u] for u in group}) == len(group)
            and all((i, j) in candidates for i, j in itertools.combinations(sorted(group), 2)))


def _total(groups, candidates):
    return sum(candidates[(i, j)] for g in groups for i, j in itertools.combinations(sorted(g), 2))


def _brute_force(annotators, candidates):
    """The greatest total over every partition of the units, and one partition reaching it."""
    best = (-1.0, None)
    for partition in set_partitions(list(range(len(annotators)))):
        if all(_valid(g, annotators, candidates) for g in partition):
            total = _total(partition, candidates)
            if total > best[0] + 1e-12:
                best = (total, sorted(sorted(g) for g in partition))
    return best


# 2-4 annotators, up to 8 spans
spans = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 12), st.integers(1, 6)), min_size=1, max_size=8)


@given(spans, st.sampled_from([0.2, 0.34, 0.5]), st.sampled_from([0, 12]))
@settings(max_examples=200, deadline=None)
def test_best_groups_equals_brute_force_over_all_partitions(units, threshold, small):
    # small = 0 sends every component of three annotators or more to HiGHS, 12 to the search over subsets
    units = sorted(set(units))
    annotators = [str(a) for a, _, _ in units]
    candidates = {}
    for i, j in itertools.combinations(range(len(units)), 2):
        similarity = span_jaccard((units[i][1], units[i][1] + units[i][2]), (units[j][1], units[j][1] + units[j][2]))
        if annotators[i] != annotators[j] and similarity >= threshold:
            candidates[(i, j)] = similarity
    with patch.object(grouping, "_SMALL", small):
        groups = best_groups(annotators, candidates)
    assert sorted(u for g in groups for u in g) == list(range(len(units)))
    assert all(_valid(g, annotators, candidates) for g in groups)
    assert abs(_total(groups, candidates) - _brute_force(annotators, candidates)[0]) < 1e-9


@given(spans)
@settings(max_examples=60, deadline=None)
def test_the_mapping_reaches_the_brute_force_optimum(units):
    # Through the mapping, each span labelled with its own name so the items say which spans they hold: the items'
    # summed Jaccard over their pairs is the greatest any valid partition of the spans reaches.
    flat = sorted(set(units))
    names = [f"L{k}" for k in range(len(flat))]
    control = Control("ner", "labels", labels=tuple(names))
    by_annotator = {}
    for name, (a, start, length) in zip(names, flat):
        by_annotator.setdefault(str(a), []).append(span(str(a), start, start + length, name, rid=name))
    submissions = {1: [Submission(1, k + 1, a, tuple(results)) for k, (a, results) in enumerate(by_annotator.items())]}
    mapped = map_one({"ner": control}, submissions, "ner",
                     MappingOptions(span_alignment="overlap", absent_span="missing"), Skips())
    annotators = [str(a) for a, _, _ in flat]
    position = [(s, s + n) for _, s, n in flat]
    candidates = {(i, j): span_jaccard(position[i], position[j]) for i, j in itertools.combinations(range(len(flat)), 2)
                  if annotators[i] != annotators[j] and span_jaccard(position[i], position[j]) >= 0.5}
    items = {}
    for _, item, _, label in mapped.records:
        items.setdefault(item, []).append(names.index(label))
    groups = list(items.values())
    assert sorted(u for g in groups for u in g) == list(range(len(flat)))
    assert all(_valid(g, annotators, candidates) for g in groups)
    assert abs(_total(groups, candidates) - _brute_force(annotators, candidates)[0]) < 1e-9
