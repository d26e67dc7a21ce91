"""Regions grouped into items by the grouping of greatest total similarity, not by a greedy order."""

import itertools
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.mapping import grouping, regions
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.grouping import best_groups
from plugin.mapping.labelconfig import Control
from plugin.mapping.regions import _equal_positions as equal_positions
from plugin.mapping.regions import span_jaccard
from plugin.settings import MappingOptions
from tests.agreement.strategies import set_partitions
from tests.plugin.conftest import map_one
from tests.profiles import examples


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
@settings(max_examples=examples(200), deadline=None)
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
        groups, crowded = best_groups(annotators, candidates)
    assert crowded == []  # at most 4 annotators: never crowded
    assert sorted(u for g in groups for u in g) == list(range(len(units)))
    assert all(_valid(g, annotators, candidates) for g in groups)
    assert abs(_total(groups, candidates) - _brute_force(annotators, candidates)[0]) < 1e-9


@given(spans)
@settings(max_examples=examples(60), deadline=None)
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


# Spans of up to three annotators at a few positions: character offsets, or XPath ranges whose global offsets may
# differ for one range (then equal positions do not say whether two spans meet, and the pairwise search decides).
offsets = st.builds(lambda s, n: {"start": s, "end": s + n}, st.integers(0, 6), st.integers(1, 3))
xpaths = st.builds(lambda s, n, g: {"start": f"/p[{s}]", "startOffset": 0, "end": f"/p[{s}]", "endOffset": n,
                                    **({"globalOffsets": {"start": g, "end": g + n}} if g is not None else {})},
                   st.integers(1, 2), st.integers(1, 3), st.sampled_from([None, 0, 10]))
marks = st.lists(st.tuples(st.sampled_from("abc"), st.one_of(offsets, xpaths), st.sampled_from(["PER", "ORG"])),
                 max_size=10)


@given(marks)
@settings(max_examples=examples(200), deadline=None)
def test_exact_spans_grouped_by_position_as_the_pairwise_search_groups_them(marks):
    by_annotator = {}
    for k, (annotator, value, label) in enumerate(marks):
        by_annotator.setdefault(annotator, []).append(
            {"id": f"r{k}", "from_name": "ner", "type": "labels", "value": {**value, "labels": [label]}})
    submissions = {1: [Submission(1, k + 1, a, tuple(results)) for k, (a, results) in enumerate(by_annotator.items())]}
    controls = {"ner": Control("ner", "labels", labels=("PER", "ORG"))}
    shortcut, pairwise = Skips(), Skips()
    taken = []

    def counted(found):
        taken.append(found is not None)
        return found

    with patch.object(regions, "_equal_positions", lambda r: counted(equal_positions(r))):
        fast = map_one(controls, submissions, "ner", MappingOptions(), shortcut)
    with patch.object(regions, "_equal_positions", lambda r: None):
        slow = map_one(controls, submissions, "ner", MappingOptions(), pairwise)
    assert fast.records == slow.records
    assert shortcut.as_dict() == pairwise.as_dict()
    if marks and all(isinstance(v["start"], int) for _, v, _ in marks):
        assert taken and all(taken)  # character offsets only: grouped by position, never by the pairwise search


def test_spans_at_one_xpath_with_different_global_offsets_go_to_the_pairwise_search():
    def xpath(rid, offset):
        value = {"start": "/p[1]", "startOffset": 0, "end": "/p[1]", "endOffset": 4, "labels": ["PER"],
                 "globalOffsets": {"start": offset, "end": offset + 4}}
        return {"id": rid, "from_name": "ner", "type": "labels", "value": value}

    controls = {"ner": Control("ner", "labels", labels=("PER",))}
    apart = {1: [Submission(1, 1, "a", (xpath("x", 0),)), Submission(1, 2, "b", (xpath("y", 10),))]}
    same = {1: [Submission(1, 1, "a", (xpath("x", 0),)), Submission(1, 2, "b", (xpath("y", 0),))]}
    # equal positions whose bounds do not meet are never compared: two items, each with one annotator's span
    assert len({item for _, item, _, label in map_one(controls, apart, "ner").records if label == "PER"}) == 2
    assert len({item for _, item, _, label in map_one(controls, same, "ner").records if label == "PER"}) == 1


def test_regions_of_a_crowd_too_large_to_group_exactly_are_left_out_and_counted():
    # 20 annotators' spans at one place, each a character longer than the one before: not all pairs reach a Jaccard
    # of 0.5, so no clique, and 2^20 candidate groups; a second place, three annotators alike, is grouped as ever.
    # (18 annotators' regions, every pair a candidate but one, took 16.5 s and 633 MB to group before; 25 gigabytes)
    by_annotator = {}
    for who in range(20):
        by_annotator.setdefault(str(who), []).append(span(str(who), 0, 5 + who, rid=f"c{who}"))
    for who in range(3):
        by_annotator[str(who)].append(span(str(who), 100, 110, "ORG", rid=f"o{who}"))
    submissions = {1: [Submission(1, k + 1, a, tuple(results)) for k, (a, results) in enumerate(by_annotator.items())]}
    control = Control("ner", "labels", labels=("PER", "ORG"))
    skips = Skips()
    mapped = map_one({"ner": control}, submissions, "ner", MappingOptions(span_alignment="overlap"), skips)
    assert {label for _, _, _, label in mapped.records} == {"ORG", "no span"}  # the crowd is in no item
    assert sorted(who for _, _, who, label in mapped.records if label == "ORG") == ["0", "1", "2"]
    assert skips.as_dict() == {"region in a crowd (units there overlap among too many annotators to align exactly "
                               "(over 65,536 candidate groups): left out of the items): Labels 'ner'": 20}
    few = {who: marks for who, marks in by_annotator.items() if int(who) < 16}  # 2^16 candidates: grouped
    submissions = {1: [Submission(1, k + 1, a, tuple(results)) for k, (a, results) in enumerate(few.items())]}
    skips = Skips()
    mapped = map_one({"ner": control}, submissions, "ner", MappingOptions(span_alignment="overlap"), skips)
    assert not skips.as_dict() and {label for _, _, _, label in mapped.records} >= {"PER", "ORG"}
