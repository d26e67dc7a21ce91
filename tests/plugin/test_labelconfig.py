"""Reading the labeling config, and inferring controls from an export without one."""

import pytest

from plugin.labelconfig import infer_controls, parse_label_config


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
    assert inferred["quality"].max_rating == 5
    assert inferred["ner"].labels == ()
