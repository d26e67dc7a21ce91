"""Per-region controls, relations, Ranker, DateTime, and what is never dropped silently."""

import pytest

from plugin.mapping import map_project
from plugin.mapping.dates import date_number
from plugin.settings import MappingOptions
from tests.plugin.mapping.helpers import items, result, run, submissions_of

# Label Studio's OCR template (tests/data/templates/computer-vision__optical-character-recognition.xml).
OCR = """<View><Image name="image" value="$ocr"/>
  <Labels name="label" toName="image"><Label value="Text"/><Label value="Handwriting"/></Labels>
  <Rectangle name="bbox" toName="image"/><Polygon name="poly" toName="image"/>
  <TextArea name="transcription" toName="image" perRegion="true"/>
  <Relations><Relation value="next"/></Relations></View>"""


def ocr_region(rid, x, label, text):
    geometry = {"x": x, "y": 10, "width": 20, "height": 5, "rotation": 0}
    return [result("bbox", "rectangle", dict(geometry), rid),
            result("label", "labels", {**geometry, "labels": [label]}, rid),
            result("transcription", "textarea", {**geometry, "text": [text]}, rid)]


def test_per_region_answers_are_items_on_the_matched_region():
    a = ocr_region("a1", 10, "Text", "Hello") + ocr_region("a2", 50, "Text", "World")
    b = ocr_region("b1", 11, "Text", "hello") + ocr_region("b2", 51, "Handwriting", "Word")
    c = ocr_region("c1", 10, "Text", "Hello")  # drew only the first region
    mapped, skips = run(OCR, submissions_of(a, b, c))
    labels = sorted(tuple(sorted(v.items())) for v in items(mapped["label"]).values())
    assert labels == [(("a", "Text"), ("b", "Handwriting"), ("c", "no region")),
                      (("a", "Text"), ("b", "Text"), ("c", "Text"))]
    texts = sorted(tuple(sorted(v.items())) for v in items(mapped["transcription"]).values())
    # Each annotator's own transcription of that region; c has no second region, so is missing there.
    assert texts == [(("a", "hello"), ("b", "hello"), ("c", "hello")), (("a", "world"), ("b", "word"))]
    assert all(item.startswith("1:") for item in items(mapped["transcription"]))
    assert mapped["bbox"].records == () and skips.total == 0


def test_relations_are_items_over_matched_region_pairs():
    def relation(source, target, *labels):
        return {"type": "relation", "from_id": source, "to_id": target, "direction": "right", "labels": list(labels)}
    a = ocr_region("a1", 10, "Text", "x") + ocr_region("a2", 50, "Text", "y") + [relation("a1", "a2", "next")]
    b = ocr_region("b1", 10, "Text", "x") + ocr_region("b2", 50, "Text", "y") + [relation("b1", "b2", "next")]
    c = ocr_region("c1", 10, "Text", "x") + ocr_region("c2", 50, "Text", "y")
    d = ocr_region("d1", 10, "Text", "x")
    mapped, skips = run(OCR, submissions_of(a, b, c, d))
    assert list(items(mapped["relations"]).values()) == [{"a": "next", "b": "next", "c": "no relation"}]
    assert skips.total == 0


def test_a_relation_with_several_labels_keeps_one_of_the_categories():
    """A relation labelled twice (``<Relations choice="multiple">``) gave the label "next+prev", outside the
    config's categories, and scoring the control raised (the fuzz of exports found it)."""
    from agreement import label_counts

    config = OCR.replace('<Relation value="next"/>', '<Relation value="next"/><Relation value="prev"/>')
    both = {"type": "relation", "from_id": "a1", "to_id": "a2", "direction": "right", "labels": ["prev", "next"]}
    one = {"type": "relation", "from_id": "b1", "to_id": "b2", "direction": "right", "labels": ["next"]}
    a = ocr_region("a1", 10, "Text", "x") + ocr_region("a2", 50, "Text", "y") + [both]
    b = ocr_region("b1", 10, "Text", "x") + ocr_region("b2", 50, "Text", "y") + [one]
    mapped, skips = run(config, submissions_of(a, b))
    assert list(items(mapped["relations"]).values()) == [{"a": "next", "b": "next"}]
    assert skips.as_dict() == {"malformed value (extra labels on one relation (the first by name counts)): "
                               "Relations 'relations'": 1}
    counts = label_counts(mapped["relations"].rows, categories=mapped["relations"].categories)
    assert counts.counts.tolist() == [[2.0, 0.0, 0.0, 0.0]]  # next, prev, related, no relation


def test_ranker_buckets_and_orders():
    buckets = """<View><List name="answers" value="$items"/>
      <Ranker name="rank" toName="answers"><Bucket name="good"/><Bucket name="bad"/></Ranker></View>"""
    value = {"ranker": {"good": ["x"], "bad": ["y"], "_": ["z"]}}
    mapped, _ = run(buckets, submissions_of([result("rank", "ranker", value)], [result("rank", "ranker", value)]))
    assert items(mapped["rank"]) == {"1:x": {"a": "good", "b": "good"}, "1:y": {"a": "bad", "b": "bad"},
                                     "1:z": {"a": "not in a bucket", "b": "not in a bucket"}}
    order = """<View><List name="answers" value="$items"/><Ranker name="rank" toName="answers"/></View>"""
    first, second = {"ranker": {"answers": ["x", "y", "z"]}}, {"ranker": {"answers": ["y", "x", "z"]}}
    mapped, _ = run(order, submissions_of([result("rank", "ranker", first)], [result("rank", "ranker", second)]))
    assert mapped["rank"].level == "ordinal"
    assert items(mapped["rank"]) == {"1:x": {"a": 1, "b": 2}, "1:y": {"a": 2, "b": 1}, "1:z": {"a": 3, "b": 3}}


def test_datetime_is_interval_data():
    assert date_number("1970-01-02") == 1.0 and date_number("1970-01-01T12:00") == 0.5
    assert date_number("10:30") == 630 and date_number("2024") == 2024.0 and date_number("2024-02") == 2024 * 12 + 1
    config = """<View><Text name="t" value="$t"/><DateTime name="when" toName="t" only="date"/></View>"""
    mapped, skips = run(config, submissions_of([result("when", "datetime", {"datetime": "1970-01-03"})],
                                               [result("when", "datetime", {"datetime": "not a date"})]))
    assert mapped["when"].level == "interval" and mapped["when"].records == ((1, "1", "a", 2.0),)
    assert skips.as_dict() == {"malformed value (datetime that does not parse): DateTime 'when'": 1}


def test_the_same_span_marked_twice_keeps_one_label_whatever_the_order():
    config = """<View><Text name="t" value="$t"/><Labels name="ner" toName="t"><Label value="PER"/>
      <Label value="ORG"/></Labels></View>"""
    per = result("ner", "labels", {"start": 0, "end": 5, "labels": ["PER"]}, "x")
    org = result("ner", "labels", {"start": 0, "end": 5, "labels": ["ORG"]}, "y")
    first, skips = run(config, submissions_of([per, org]))
    second, _ = run(config, submissions_of([org, per]))
    assert first["ner"].records == second["ner"].records == ((1, "1:0-5", "a", "ORG"),)
    assert skips.as_dict() == {"duplicate region (one annotator marked one position twice; the first label by name "
                               "counts): Labels 'ner'": 1}


def test_results_of_unknown_controls_and_unsupported_tags_are_counted():
    config = """<View><Text name="t" value="$t"/><Choices name="c" toName="t"><Choice value="x"/></Choices></View>"""
    results = [result("c", "choices", {"choices": ["x"]}), result("gone", "polygonlabels", {"points": []}),
               result("other", "custom", {}), {"type": "relation", "from_id": "a", "to_id": "b"}]
    mapped, skips = run(config, submissions_of(results))
    assert mapped["c"].records == ((1, "1", "a", "x"),)
    assert skips.as_dict() == {"control not in the config: PolygonLabels 'gone'": 1,
                               "control not in the config: type 'custom' 'other'": 1,
                               "control not in the config (a relation; add <Relations/> to the labeling config to "
                               "score relations): Relations": 1}


def test_one_task_alone_gives_the_same_rows_as_all_tasks():
    a = ocr_region("a1", 10, "Text", "x") + ocr_region("a2", 50, "Text", "y")
    b = ocr_region("b1", 12, "Text", "x")
    tasks = {**submissions_of(a, b, task=1), **submissions_of(b, a, task=2)}
    from plugin.mapping.annotations import Skips
    from plugin.mapping.labelconfig import parse_label_config
    controls = parse_label_config(OCR)
    together = map_project(controls, tasks, Skips(), MappingOptions())
    for task, task_submissions in tasks.items():
        alone = map_project(controls, {task: task_submissions}, Skips(), MappingOptions())
        for name, mapped in together.items():
            assert [r for r in mapped.records if r[0] == task] == list(alone[name].records), (name, task)


@pytest.mark.parametrize("absent", ["label", "missing"])
def test_absent_region_option_applies_to_every_family(absent):
    a = ocr_region("a1", 10, "Text", "x")
    mapped, _ = run(OCR, submissions_of(a, []), MappingOptions(absent_span=absent))
    assert items(mapped["label"]) == ({"1:10-10-20-5": {"a": "Text", "b": "no region"}} if absent == "label"
                                      else {"1:10-10-20-5": {"a": "Text"}})
