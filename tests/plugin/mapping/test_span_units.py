"""Span-like controls as unit rows for the span measures, and each continuum's length (plugin.mapping.span_units)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.labelconfig import parse_label_config
from plugin.mapping.span_units import SPAN_COLUMNS, continuum_length, is_span_control, span_units
from plugin.settings import MappingOptions
from tests.plugin.mapping.helpers import run
from tests.profiles import examples

TEXT = """<View><Text name="text" value="$text"/>
  <Labels name="ner" toName="text"><Label value="PER"/><Label value="LOC"/></Labels>
  <Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices>
</View>"""


def text_span(start, end, label, rid=None):
    out = {"from_name": "ner", "to_name": "text", "type": "labels",
           "value": {"start": start, "end": end, "labels": [label]}}
    if rid:
        out["id"] = rid
    return out


def subs(*per_annotator, task=1):
    return {task: [Submission(task, i + 1, name, tuple(results)) for i, (name, results) in enumerate(per_annotator)]}


def test_text_spans_are_rows_and_every_submitter_is_present():
    submissions = subs(("a", [text_span(0, 5, "PER", "r1"), text_span(10, 15, "LOC", "r2")]),
                       ("b", [text_span(0, 4, "PER", "r1")]),
                       ("c", [{"from_name": "sentiment", "to_name": "text", "type": "choices",
                               "value": {"choices": ["pos"]}}]))
    mapped, skips = run(TEXT, submissions)
    assert not skips.as_dict()
    ner = mapped["ner"]
    assert SPAN_COLUMNS == ("task", "scope", "annotator", "label", "start", "end")
    assert sorted(ner.spans) == [(1, (), "a", "LOC", 10.0, 15.0), (1, (), "a", "PER", 0.0, 5.0),
                                 (1, (), "b", "PER", 0.0, 4.0)]
    # c marked nothing: present all the same (F1 counts their misses, unitizing alpha a gap over the text).
    assert ner.submitted == ((1, "a"), (1, "b"), (1, "c"))
    assert all(type(v) in (int, str, float, tuple) for row in ner.spans for v in row)
    # Other controls have no span rows.
    assert mapped["sentiment"].spans is None and mapped["sentiment"].submitted is None


def test_one_task_mapped_alone_gives_the_same_rows_as_the_whole_project():
    both = {**subs(("a", [text_span(0, 5, "PER")]), ("b", [text_span(1, 5, "PER")]), task=1),
            **subs(("a", [text_span(2, 3, "LOC")]), ("b", []), task=2)}
    whole = run(TEXT, both)[0]["ner"]
    alone = run(TEXT, {2: both[2]})[0]["ner"]
    assert [r for r in whole.spans if r[0] == 2] == list(alone.spans) == [(2, (), "a", "LOC", 2.0, 3.0)]
    assert alone.submitted == ((2, "a"), (2, "b"))


def test_which_controls_are_span_like():
    controls = parse_label_config("""<View>
      <Text name="text" value="$text"/><Labels name="ner" toName="text"><Label value="x"/></Labels>
      <Image name="image" value="$image"/><Labels name="tag" toName="image"><Label value="x"/></Labels>
      <RectangleLabels name="box" toName="image"><Label value="x"/></RectangleLabels>
      <Audio name="audio" value="$audio"/><Labels name="sound" toName="audio"><Label value="x"/></Labels>
      <Video name="video" value="$video"/><TimelineLabels name="timeline" toName="video"><Label value="x"/></TimelineLabels>
      <TimeSeries name="ts" value="$csv"><Channel column="v"/></TimeSeries>
      <TimeSeriesLabels name="tsl" toName="ts"><Label value="x"/></TimeSeriesLabels>
      <HyperText name="html" value="$html"/><HyperTextLabels name="hl" toName="html"><Label value="x"/></HyperTextLabels>
      <Paragraphs name="chat" value="$chat"/><ParagraphLabels name="pl" toName="chat"><Label value="x"/></ParagraphLabels>
    </View>""")
    assert {name for name, c in controls.items() if is_span_control(c)} == {
        "ner", "sound", "timeline", "tsl", "hl", "pl"}


def test_text_length_counts_code_points_as_label_studio_stores_offsets():
    # Label Studio 1.23 stores a Text span's start and end in Unicode code points (domManager.ts: [...text]):
    # in "I 😀 Paris" Paris is [4, 9). A JavaScript string (UTF-16) would be 10 long, with Paris at [5, 10).
    control = parse_label_config(TEXT)["ner"]
    text = "I \N{GRINNING FACE} Paris"
    assert len(text.encode("utf-16-le")) // 2 == 10
    assert text[4:9] == "Paris"
    results = [text_span(4, 9, "LOC")]
    assert continuum_length(control, {"text": text}, results) == 9.0
    # Never less than the end of the last unit (offsets stored by an older release, in UTF-16, run one further).
    assert continuum_length(control, {"text": text}, [text_span(5, 10, "LOC")]) == 10.0
    # No text under the key: unknown.
    assert continuum_length(control, {"other": text}, results) is None


def test_hypertext_length_is_its_text_content_and_xpath_only_spans_are_skipped():
    config = """<View><HyperText name="html" value="$html"/>
      <HyperTextLabels name="hl" toName="html"><Label value="PER"/></HyperTextLabels></View>"""
    control = parse_label_config(config)["hl"]
    html = "<div><p><b>Jules</b>: No &amp; no.</p><p>Vincent</p></div>"
    with_offsets = {"from_name": "hl", "to_name": "html", "type": "hypertextlabels", "id": "r1",
                    "value": {"start": "/div[1]/p[1]/b[1]/text()[1]", "startOffset": 0,
                              "end": "/div[1]/p[1]/b[1]/text()[1]", "endOffset": 5,
                              "globalOffsets": {"start": 0, "end": 5}, "hypertextlabels": ["PER"]}}
    xpath_only = {**with_offsets, "id": "r2", "value": {k: v for k, v in with_offsets["value"].items()
                                                         if k != "globalOffsets"}}
    # "Jules: No & no.Vincent": the text nodes joined, entities decoded.
    assert continuum_length(control, {"html": html}, [with_offsets]) == 22.0
    mapped, skips = run(config, subs(("a", [with_offsets]), ("b", [xpath_only])))
    assert mapped["hl"].spans == ((1, (), "a", "PER", 0.0, 5.0),)
    assert skips.as_dict() == {"span without character offsets (XPath only; left out of F1, unitizing alpha and "
                               "gamma): HyperTextLabels 'hl'": 1}
    # The XPath-only span is still an item of the item mapping.
    assert {annotator for _, _, annotator, label in mapped["hl"].records if label == "PER"} == {"a", "b"}


AUDIO = """<View><Audio name="audio" value="$url"/>
  <Labels name="sound" toName="audio"><Label value="Beat"/></Labels></View>"""


def test_audio_length_is_the_original_length_label_studio_records():
    control = parse_label_config(AUDIO)["sound"]
    # As label-studio's own audio-regions example records a region (web/libs/editor/tests/e2e/examples).
    region = {"from_name": "sound", "to_name": "audio", "type": "labels", "original_length": 98.719925,
              "value": {"start": 12.778410892095105, "end": 28.50568583621215, "labels": ["Beat"]}}
    assert continuum_length(control, {"url": "x.mp3"}, [region]) == 98.719925
    bare = {**region, "original_length": None}
    assert continuum_length(control, {"url": "x.mp3"}, [bare]) is None
    long = {**region, "value": {**region["value"], "end": 120.5}}
    assert continuum_length(control, {}, [long]) == 120.5


def test_audio_channels_are_continua_of_their_own():
    region = {"from_name": "sound", "to_name": "audio", "type": "labels", "original_length": 60.0,
              "value": {"start": 1.5, "end": 2.5, "channel": 1, "labels": ["Beat"]}}
    mapped, _ = run(AUDIO, subs(("a", [region])))
    assert mapped["sound"].spans == ((1, (1,), "a", "Beat", 1.5, 2.5),)
    control = parse_label_config(AUDIO)["sound"]
    assert continuum_length(control, {}, [region], scope=(1,)) == 60.0


VIDEO = """<View><Video name="video" value="$video"/>
  <VideoRectangle name="box" toName="video"/>
  <TimelineLabels name="timeline" toName="video"><Label value="Run"/><Label value="Walk"/></TimelineLabels></View>"""


def test_timeline_ranges_are_frames_from_one_with_their_end_included():
    region = {"from_name": "timeline", "to_name": "video", "type": "timelinelabels", "id": "t1",
              "value": {"ranges": [{"start": 1, "end": 5}, {"start": 4, "end": 8}, {"start": 10, "end": 12}],
                        "timelinelabels": ["Run"]}}
    mapped, skips = run(VIDEO, subs(("a", [region])))
    # Frames 1-8 (merged) and 10-12: [0, 8) and [9, 12) on a continuum where frame f is [f - 1, f).
    assert mapped["timeline"].spans == ((1, (), "a", "Run", 0.0, 8.0), (1, (), "a", "Run", 9.0, 12.0))
    assert not skips.as_dict()
    control = parse_label_config(VIDEO)["timeline"]
    # A VideoRectangle result on the same video carries framesCount (VideoRegion.serialize); timelines do not.
    track = {"from_name": "box", "to_name": "video", "type": "videorectangle",
             "value": {"framesCount": 131, "duration": 5.425, "sequence": [{"frame": 1, "x": 1, "y": 1,
                                                                           "width": 5, "height": 5}]}}
    assert continuum_length(control, {}, [region, track]) == 131.0
    assert continuum_length(control, {}, [region]) is None


def test_instants_and_spans_of_no_length_are_counted_not_units():
    series = """<View><TimeSeries name="ts" value="$csv"><Channel column="v"/></TimeSeries>
      <TimeSeriesLabels name="tsl" toName="ts"><Label value="Run"/></TimeSeriesLabels></View>"""
    instant = {"from_name": "tsl", "to_name": "ts", "type": "timeserieslabels", "id": "i",
               "value": {"start": 40, "end": 40, "instant": True, "timeserieslabels": ["Run"]}}
    before = {**instant, "id": "n", "value": {"start": -3, "end": 2, "timeserieslabels": ["Run"]}}
    mapped, skips = run(series, subs(("a", [instant, before])))
    assert mapped["tsl"].spans == ()
    assert skips.as_dict() == {
        "instant (start equals end: no extent for span measures; left out of F1, unitizing alpha and gamma): "
        "TimeSeriesLabels 'tsl'": 1,
        "span before the start of its continuum (start below 0; left out of F1, unitizing alpha and gamma): "
        "TimeSeriesLabels 'tsl'": 1}
    assert len(mapped["tsl"].records) == 2  # both still items
    empty, skips = run(TEXT, subs(("a", [text_span(3, 3, "PER")])))
    assert empty["ner"].spans == () and list(skips.as_dict()) == [
        ("empty span (start equals end: no extent for span measures; left out of F1, unitizing alpha and gamma): "
         "Labels 'ner'")]


PARAGRAPHS = """<View><Paragraphs name="chat" value="$dialogue"/>
  <ParagraphLabels name="pl" toName="chat"><Label value="Q"/></ParagraphLabels></View>"""


def paragraph_span(start, start_offset, end, end_offset, rid):
    return {"from_name": "pl", "to_name": "chat", "type": "paragraphlabels", "id": rid,
            "value": {"start": start, "startOffset": start_offset, "end": end, "endOffset": end_offset,
                      "paragraphlabels": ["Q"]}}


def test_each_paragraph_is_a_continuum_and_spans_across_paragraphs_are_counted():
    dialogue = [{"author": "A", "text": "Dont you hate that?"}, {"author": "B", "text": "Hate what?"}]
    mapped, skips = run(PARAGRAPHS, subs(("a", [paragraph_span("1", 0, "1", 10, "p1"),
                                                paragraph_span("0", 5, "1", 4, "p2")])))
    assert mapped["pl"].spans == ((1, ("paragraph=1",), "a", "Q", 0.0, 10.0),)
    assert skips.as_dict() == {"span across paragraphs (each paragraph is a continuum of its own; left out of F1, "
                               "unitizing alpha and gamma): ParagraphLabels 'pl'": 1}
    control = parse_label_config(PARAGRAPHS)["pl"]
    results = [paragraph_span("1", 0, "1", 10, "p1")]
    assert continuum_length(control, {"dialogue": dialogue}, results, scope=("paragraph=1",)) == 10.0
    assert continuum_length(control, {"dialogue": dialogue}, results, scope=("paragraph=0",)) == 19.0
    assert continuum_length(control, {"dialogue": dialogue}, results, scope=("paragraph=7",)) is None


def test_time_series_has_no_known_length():
    series = """<View><TimeSeries name="ts" value="$csv"><Channel column="v"/></TimeSeries>
      <TimeSeriesLabels name="tsl" toName="ts"><Label value="Run"/></TimeSeriesLabels></View>"""
    control = parse_label_config(series)["tsl"]
    region = {"from_name": "tsl", "to_name": "ts", "type": "timeserieslabels",
              "value": {"start": 4, "end": 23, "timeserieslabels": ["Run"]}}
    assert continuum_length(control, {"csv": "https://example.org/a.csv"}, [region]) is None


@pytest.mark.parametrize("alignment", ["exact", "overlap"])
def test_span_rows_do_not_depend_on_the_alignment_or_result_order(alignment):
    results = [text_span(0, 5, "PER", "r1"), text_span(4, 9, "LOC", "r2"), text_span(20, 25, "PER", "r3")]
    options = MappingOptions(span_alignment=alignment)
    skips = Skips()
    controls = parse_label_config(TEXT)
    forward = map_project(controls, subs(("a", results), ("b", results[:1])), skips, options)["ner"]
    backward = map_project(controls, subs(("a", results[::-1]), ("b", results[:1])), skips,
                           MappingOptions())["ner"]
    assert forward.spans == backward.spans and len(forward.spans) == 4


def test_span_units_lay_one_continuum_per_task_and_scope():
    both = {**subs(("a", [text_span(2, 5, "PER")]), ("b", [text_span(2, 6, "PER")]), ("c", []), task=1),
            **subs(("a", []), ("b", []), task=2)}
    ner = run(TEXT, both)[0]["ner"]
    units = span_units(ner, lengths={(1, ()): 20.0})
    assert units.docs == ((1, ()), (2, ())) and units.annotators == ("a", "b", "c")
    assert units.labels == ("PER", "LOC")
    assert units.start.tolist() == [2.0, 2.0] and units.end.tolist() == [5.0, 6.0]
    # c submitted task 1 and marked nothing: present. Task 2, where nobody marked anything, is a continuum too
    # (empty: its length is not known here).
    assert units.present.tolist() == [[True, True, True], [True, True, False]]
    assert units.lengths.tolist() == [20.0, 0.0]
    # Unknown length: the units' extent, moved to begin at 0.
    moved = span_units(ner)
    assert moved.start.tolist() == [0.0, 0.0] and moved.end.tolist() == [3.0, 4.0]
    assert moved.lengths.tolist() == [4.0, 0.0]
    with pytest.raises(ValueError, match="not a span-like control"):
        span_units(run(TEXT, both)[0]["sentiment"])


def test_span_units_of_time_series_begin_at_their_first_unit():
    series = """<View><TimeSeries name="ts" value="$csv"><Channel column="v"/></TimeSeries>
      <TimeSeriesLabels name="tsl" toName="ts"><Label value="Run"/></TimeSeriesLabels></View>"""

    def region(start, end):
        return {"from_name": "tsl", "to_name": "ts", "type": "timeserieslabels",
                "value": {"start": start, "end": end, "timeserieslabels": ["Run"]}}
    # Dates are seconds since 1970: the continuum is the units' extent, not [0, 1.7e9).
    mapped = run(series, subs(("a", [region("2024-01-01T00:00:00", "2024-01-01T00:01:00")]),
                              ("b", [region("2024-01-01T00:00:30", "2024-01-01T00:02:00")])))[0]["tsl"]
    units = span_units(mapped)
    assert units.start.tolist() == [0.0, 30.0] and units.end.tolist() == [60.0, 120.0]
    assert units.lengths.tolist() == [120.0]


spans_of_one = st.lists(st.tuples(st.integers(0, 40), st.integers(1, 10), st.sampled_from(["PER", "LOC"])),
                        max_size=6, unique_by=lambda s: (s[0], s[1]))


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(spans_of_one, min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_span_rows_are_the_marked_spans_whatever_the_order(marked, random):
    per_annotator = [(chr(ord("a") + i), [text_span(start, start + width, label, f"{i}-{j}")
                                          for j, (start, width, label) in enumerate(spans)])
                     for i, spans in enumerate(marked)]
    expected = sorted((name, label, float(start), float(start + width))
                      for name, spans in zip("abcd", marked, strict=False) for start, width, label in spans)
    shuffled = [(name, random.sample(results, len(results))) for name, results in per_annotator]
    random.shuffle(shuffled)
    for alignment in ("exact", "overlap"):
        options = MappingOptions(span_alignment=alignment)
        ner = run(TEXT, subs(*shuffled), options)[0]["ner"]
        assert sorted((a, lab, s, e) for _, _, a, lab, s, e in ner.spans) == expected
        assert ner.spans == run(TEXT, subs(*per_annotator), options)[0]["ner"].spans
        assert sorted(ner.submitted) == [(1, name) for name, _ in per_annotator]
