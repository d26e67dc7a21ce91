"""Labels, HyperTextLabels and ParagraphLabels: spans as items (Datasaur)."""

import pandas as pd
import pytest

from agreement import krippendorff_alpha, label_counts
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.labelconfig import Control
from plugin.mapping.spans import NO_SPAN
from plugin.settings import MappingOptions
from tests.plugin.conftest import FIRST, SECOND, THIRD, map_one, rows_of


def test_exact_spans_with_absent_annotators_labeled_no_span(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "ner", MappingOptions(), Skips())
    assert mapped.categories == ("PER", "ORG", "LOC", NO_SPAN)
    assert rows_of(mapped, first) == {
        (f"{first}:0-5", FIRST, "PER"), (f"{first}:0-5", SECOND, "PER"), (f"{first}:0-5", THIRD, "PER"),
        (f"{first}:15-19", FIRST, "ORG"), (f"{first}:15-19", SECOND, "ORG"), (f"{first}:15-19", THIRD, "LOC"),
        (f"{first}:23-28", FIRST, "LOC"), (f"{first}:23-28", SECOND, NO_SPAN), (f"{first}:23-28", THIRD, NO_SPAN),
    }


def test_absent_span_missing_leaves_single_spans_unpaired(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "ner", MappingOptions(absent_span="missing"), Skips())
    assert {r for r in rows_of(mapped, first) if r[0].endswith("23-28")} == {(f"{first}:23-28", FIRST, "LOC")}


def test_hypertext_and_paragraph_spans(controls, submissions):
    first = min(submissions)
    html = map_one(controls, submissions, "html_ner", MappingOptions(), Skips())
    assert {r[2] for r in rows_of(html, first)} == {"PER", "ORG"} and len(rows_of(html, first)) == 3
    dialogue = map_one(controls, submissions, "dialogue_act", MappingOptions(), Skips())
    assert sorted(r[2] for r in rows_of(dialogue, first)) == ["answer", "question", "question"]


def span(annotator, start, end, label, task=1):
    return Submission(task, 1, annotator, ({"from_name": "ner", "type": "labels",
                                            "value": {"start": start, "end": end, "labels": [label]}},))


def test_overlap_alignment_matches_spans_by_jaccard():
    control = Control("ner", "labels", labels=("PER", "ORG"))
    submissions = {1: [span("a", 0, 10, "PER"), span("b", 1, 10, "PER"), span("c", 20, 30, "ORG")]}
    exact = map_one({control.name: control}, submissions, control.name, MappingOptions(), Skips())
    overlap = map_one({control.name: control}, submissions, control.name, MappingOptions(span_alignment="overlap"), Skips())
    assert exact.rows["item"].nunique() == 3
    assert overlap.rows["item"].nunique() == 2
    assert set(overlap.rows.groupby("item")["label"].apply(tuple).map(sorted).map(tuple)) == {
        ("PER", "PER", "no span"), ("ORG", "no span", "no span")}
    strict = map_one({control.name: control}, submissions, control.name, MappingOptions(span_alignment="overlap", span_jaccard=0.95), Skips())
    assert strict.rows["item"].nunique() == 3


def test_datasaur_worked_example_gives_056():
    # Datasaur: Labeler A and Reviewer; spans only one of them labeled are left out (absent_span="missing").
    spans = [((0, 21), "EVE", "TITLE"), ((25, 42), "PER", None), ((50, 56), "PER", "PER"), ((60, 79), "PER", "PER"),
             ((80, 84), "YEAR", "YEAR"), ((85, 89), "YEAR", "YEAR"), ((90, 101), "ORG", "PER"),
             ((110, 115), None, "QTY")]
    a = [{"from_name": "ner", "type": "labels", "value": {"start": s, "end": e, "labels": [x]}}
         for (s, e), x, _ in spans if x]
    r = [{"from_name": "ner", "type": "labels", "value": {"start": s, "end": e, "labels": [y]}}
         for (s, e), _, y in spans if y]
    control = Control("ner", "labels", labels=("EVE", "ORG", "PER", "QTY", "TITLE", "YEAR"))
    submissions = {1: [Submission(1, 1, "labeler_a", tuple(a)), Submission(1, 2, "reviewer", tuple(r))]}
    missing = map_one({control.name: control}, submissions, control.name, MappingOptions(absent_span="missing"), Skips())
    assert krippendorff_alpha(label_counts(missing.rows, categories=missing.categories)) == pytest.approx(0.56)
    labeled = map_one({control.name: control}, submissions, control.name, MappingOptions(), Skips())
    assert krippendorff_alpha(label_counts(labeled.rows, categories=labeled.categories)) < 0.56


def test_broken_spans_are_skipped_and_counted():
    control = Control("ner", "labels", labels=("PER",))
    bad = [{"from_name": "ner", "type": "labels", "value": {"start": 5, "end": 2, "labels": ["PER"]}},
           {"from_name": "ner", "type": "labels", "value": {"start": 0, "end": 2, "labels": []}},
           {"from_name": "ner", "type": "labels", "value": {"start": 0, "end": 2, "labels": ["XYZ"]}},
           {"from_name": "ner", "type": "choices", "value": {"choices": ["PER"]}},
           {"from_name": "ner", "type": "labels", "value": "0-2"}]
    skips = Skips()
    mapped = map_one({control.name: control}, {1: [Submission(1, 1, "a", tuple(bad))]}, control.name, MappingOptions(), skips)
    assert mapped.rows.empty
    assert skips.total == 5
    assert isinstance(mapped.rows, pd.DataFrame) and list(mapped.rows.columns) == ["task", "item", "annotator", "label"]


def test_a_span_whose_offsets_a_float_cannot_hold_or_whose_squares_overflow_is_skipped():
    """A span ending at 1e300 overflowed gamma's and unitizing alpha's squared lengths (the control was not scored),
    and one ending at an integer of 400 digits raised OverflowError in the mapping (the fuzz of exports found both):
    each has no readable position; the task's other spans are scored."""
    control = Control("ner", "labels", labels=("PER",), object_tag="text")

    def span(rid, end):
        return {"id": rid, "from_name": "ner", "type": "labels", "value": {"start": 0, "end": end, "labels": ["PER"]}}

    submissions = {1: [Submission(1, 1, "a", (span("x", 1e300), span("y", 10**400), span("z", 4)))]}
    skips = Skips()
    mapped = map_one({control.name: control}, submissions, control.name, MappingOptions(), skips)
    assert rows_of(mapped) == {("1:0-4", "a", "PER")} and mapped.spans == ((1, (), "a", "PER", 0.0, 4.0),)
    assert skips.as_dict() == {"malformed value (no readable position): Labels 'ner'": 2}


def test_an_xpath_span_with_a_list_for_an_offset_is_skipped_alone():
    # a JSON list where an offset belongs is no position: that region is counted, the task's others are scored
    control = Control("html_ner", "hypertextlabels", labels=("PER",))

    def xpath(rid, offset):
        return {"id": rid, "from_name": "html_ner", "type": "hypertextlabels",
                "value": {"start": "/p[1]", "startOffset": offset, "end": "/p[1]", "endOffset": 4,
                          "hypertextlabels": ["PER"]}}

    submissions = {1: [Submission(1, 1, "a", (xpath("x", 0), xpath("y", [1]))),
                       Submission(1, 2, "b", (xpath("z", 0),))]}
    skips = Skips()
    mapped = map_one({control.name: control}, submissions, control.name, MappingOptions(), skips)
    assert rows_of(mapped) == {("1:/p[1]-0-/p[1]-4", "a", "PER"), ("1:/p[1]-0-/p[1]-4", "b", "PER")}
    counted = skips.as_dict()
    assert counted["malformed value (no readable position): HyperTextLabels 'html_ner'"] == 1
    assert not any("failed" in reason for reason in counted)
