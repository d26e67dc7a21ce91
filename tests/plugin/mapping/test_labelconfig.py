"""Reading the labeling config, and inferring controls from an export without one."""

import pytest

from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, Submission
from plugin.mapping.labelconfig import infer_controls, parse_label_config
from plugin.settings import MappingOptions


def test_every_control_of_the_recorded_config(controls):
    assert set(controls) == {"sentiment", "topics", "ner", "quality", "score", "taxonomy", "summary", "html_ner",
                             "dialogue_act", "objects", "preference"}
    assert controls["sentiment"].labels == ("positive", "negative", "neutral")
    assert not controls["sentiment"].multiple and controls["topics"].multiple
    assert controls["quality"].max_rating == 5
    assert controls["taxonomy"].labels == ("Animals", "Animals / Mammals", "Animals / Birds", "Plants")
    assert controls["objects"].tag == "rectanglelabels" and controls["objects"].to_name == "image"
    assert controls["preference"].result_type == "pairwise"


def test_malformed_config_is_a_clear_error():
    with pytest.raises(ValueError, match="not well-formed XML"):
        parse_label_config("<View><Choices name='x'>")


def test_controls_inferred_from_results(recorded):
    inferred = infer_controls(recorded["tasks"])
    assert set(inferred) == set(parse_label_config(recorded["label_config"]))
    assert inferred["topics"].multiple and not inferred["sentiment"].multiple
    assert inferred["quality"].max_rating == 0 and inferred["quality"].rating_categories is None
    assert inferred["ner"].labels == ()


def test_a_span_control_inferred_on_text_knows_its_text():
    def task(data, start=0, end=3):
        return {"data": data, "annotations": [{"result": [
            {"from_name": "ner", "to_name": "text", "type": "labels", "value": {"start": start, "end": end,
                                                                                "labels": ["PER"]}}]}]}

    inferred = infer_controls([task({"text": "Ann met Bob."}), task({"text": "Bob left."})])
    assert (inferred["ner"].object_tag, inferred["ner"].object_value) == ("text", "text")
    # one task whose data lacks the text: the object is not known, and lengths fall back to the spans' extent
    unknown = infer_controls([task({"text": "Ann met Bob."}), task({"body": "Bob left."})])
    assert (unknown["ner"].object_tag, unknown["ner"].object_value) == ("", "")
    # the spans label an image's data, not text: not a text object
    assert infer_controls([task({"text": ["not", "text"]})])["ner"].object_value == ""


def test_alias_repeater_per_region_and_relations():
    controls = parse_label_config("""<View>
      <Image name="image" value="$image"/>
      <Labels name="label" toName="image"><Label value="Text"/><Label value="Handwriting" alias="hw"/></Labels>
      <Rectangle name="bbox" toName="image"/>
      <TextArea name="transcription" toName="image" perRegion="true"/>
      <Relations><Relation value="next"/></Relations>
      <Repeater on="$pages" indexFlag="{{i}}"><Choices name="page_{{i}}" toName="image"><Choice value="a"/></Choices>
      </Repeater>
      <DateTime name="when" toName="image" only="date"/>
      <Ranker name="rank" toName="image"><Bucket name="good"/><Bucket name="bad"/></Ranker>
    </View>""")
    assert controls["label"].labels == ("Text", "hw") and controls["label"].object_tag == "image"
    assert controls["bbox"].tag == "rectangle" and controls["bbox"].tag_name == "Rectangle"
    assert controls["transcription"].per_region
    assert controls["relations"].labels == ("next",) and controls["relations"].result_type == "relation"
    repeated = controls["page_{{i}}"]
    assert repeated.matches("page_0") and repeated.matches("page_12") and not repeated.matches("page_x")
    assert controls["when"].only == "date" and controls["rank"].labels == ("good", "bad")


def test_a_choice_listed_twice_is_counted_once_and_noted_on_its_control():
    # Label Studio's own document-retrieval template lists <Choice value="Two"/> twice.
    controls = parse_label_config('<View><Text name="t" value="$t"/>'
                                  '<Choices name="a" toName="t"><Choice value="x"/><Choice value="x"/></Choices>'
                                  '<Choices name="b" toName="t"><Choice value="x"/></Choices></View>')
    assert controls["a"].labels == ("x",) and controls["a"].notes == ("label 'x' listed twice; counted once",)
    assert controls["b"].notes == () and not controls["a"].problems


def test_a_broken_control_is_skipped_by_name_and_the_rest_scored():
    controls = parse_label_config('<View><Text name="t" value="$t"/><Rating name="r" toName="t" maxRating="five"/>'
                                  '<Choices name="c" toName="t"><Choice value="x"/></Choices></View>')
    assert controls["r"].problems == ("maxRating 'five' is not a whole number",)
    results = ({"from_name": "r", "type": "rating", "value": {"rating": 3}},
               {"from_name": "c", "type": "choices", "value": {"choices": ["x"]}})
    skips = Skips()
    mapped = map_project(controls, {1: [Submission(1, 1, "a", results)]}, skips, MappingOptions())
    assert mapped["r"].records == () and mapped["c"].records == ((1, "1", "a", "x"),)
    assert skips.as_dict() == {"config problem (maxRating 'five' is not a whole number): Rating 'r'": 1}


def test_every_shipped_template_parses(template_configs):
    # tests/data/templates: the configs Label Studio 1.23.2 ships (see SOURCES).
    tags = set()
    for name, xml in template_configs.items():
        controls = parse_label_config(xml)
        assert controls, name
        assert not any(c.problems for c in controls.values()), name
        tags |= {c.tag for c in controls.values()}
    assert {"polygonlabels", "keypointlabels", "brushlabels", "videorectangle", "timelinelabels",
            "timeserieslabels", "relations", "ranker", "rectangle", "polygon", "ocrlabels"} <= tags


def test_object_value_is_the_data_key_of_the_labelled_object():
    controls = parse_label_config("""<View>
      <Text name="text" value="$text"/>
      <Labels name="ner" toName="text"><Label value="PER"/></Labels>
      <HyperText name="html" value="$page_html"/>
      <HyperTextLabels name="html_ner" toName="html"><Label value="PER"/></HyperTextLabels>
      <Audio name="audio" value="$url"/>
      <Labels name="sound" toName="audio"><Label value="Beat"/></Labels>
      <Text name="fixed" value="A literal sentence, not task data."/>
      <Choices name="about_fixed" toName="fixed"><Choice value="a"/></Choices>
      <Repeater on="$pages" indexFlag="{{idx}}">
        <Image name="page_{{idx}}" value="$pages[{{idx}}].url"/>
        <RectangleLabels name="box_{{idx}}" toName="page_{{idx}}"><Label value="x"/></RectangleLabels>
      </Repeater>
      <Choices name="nowhere" toName="missing"><Choice value="a"/></Choices>
    </View>""")
    assert controls["ner"].object_value == "text" and controls["ner"].object_tag == "text"
    assert controls["html_ner"].object_value == "page_html"
    assert controls["sound"].object_value == "url" and controls["sound"].object_tag == "audio"
    # A literal value, an indexed value and an object the config lacks give no key.
    assert controls["about_fixed"].object_value == ""
    assert controls["box_{{idx}}"].object_value == ""
    assert controls["nowhere"].object_value == "" and controls["nowhere"].object_tag == ""


def test_span_corpora_configs_name_their_data_keys():
    from tests.plugin.conftest import DATA
    keys = {name: next(iter(parse_label_config((DATA / "spans" / f"{name}_config.xml").read_text()).values()))
            for name in ("krippendorff2004", "leoka", "lsf_audio", "lsf_hypertext", "lsf_paragraphs", "lsf_timeseries")}
    assert {name: control.object_value for name, control in keys.items()} == {
        "krippendorff2004": "text", "leoka": "text", "lsf_audio": "url", "lsf_hypertext": "text",
        "lsf_paragraphs": "dialogue", "lsf_timeseries": "csv"}
