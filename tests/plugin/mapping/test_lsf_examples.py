"""Label Studio's own examples that the mapping once refused (tests/data/lsf_examples, sources in SOURCE.md).

- label-studio-frontend's ranker example stores a Ranker's value as one flat
  list, ``{"ranker": ["1234", "123", "12345", "123456", "1234567"]}``;
- its video example stores a track drawn upwards with ``"height":
  -15.972222222222221`` on every keyframe.

Both are read as Label Studio draws them, not skipped as malformed.
"""

import copy
import json

import numpy as np
import pytest

from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, collect_submissions
from plugin.mapping.boxes import box, normalised_box
from plugin.mapping.labelconfig import parse_label_config
from plugin.mapping.video import track
from plugin.settings import MappingOptions
from tests.plugin.conftest import DATA
from tests.plugin.mapping.helpers import items, result, run, submissions_of

EXAMPLES = DATA / "lsf_examples"


def _example(name):
    config = parse_label_config((EXAMPLES / f"{name}_config.xml").read_text())
    annotation = json.loads((EXAMPLES / f"{name}_annotation.json").read_text())["annotations"][0]
    task = json.loads((EXAMPLES / f"{name}_tasks.json").read_text())[0]
    return config, annotation, task


def _mapped(config, task, *annotations):
    """The task annotated by annotators "1", "2", ... with the given annotations."""
    task = {**task, "id": 1, "annotations": [
        {**copy.deepcopy(a), "id": i, "completed_by": i, "ground_truth": False} for i, a in enumerate(annotations, 1)]}
    skips = Skips()
    mapped = map_project(config, collect_submissions([task], skips), skips, MappingOptions())
    return mapped, skips


def test_flat_ranker_list_of_the_frontend_example_is_one_order():
    config, annotation, task = _example("ranker")
    assert annotation["result"][0]["value"] == {"ranker": ["1234", "123", "12345", "123456", "1234567"]}
    second = copy.deepcopy(annotation)
    second["result"][0]["value"]["ranker"] = ["123", "1234", "12345", "1234567", "123456"]
    mapped, skips = _mapped(config, task, annotation, second)
    assert not skips.as_dict()
    rank = mapped["rank"]
    assert rank.level == "ordinal"
    assert items(rank) == {"1:1234": {"1": 1, "2": 2}, "1:123": {"1": 2, "2": 1}, "1:12345": {"1": 3, "2": 3},
                           "1:123456": {"1": 4, "2": 5}, "1:1234567": {"1": 5, "2": 4}}


def test_flat_ranker_list_with_buckets_is_the_list_in_no_bucket():
    config = """<View><List name="search" value="$items"/>
      <Ranker name="rank" toName="search"><Bucket name="relevant"/><Bucket name="off"/></Ranker></View>"""
    flat = {"ranker": ["x", "y"]}
    sorted_ = {"ranker": {"relevant": ["x"], "_": ["y"]}}
    mapped, skips = run(config, submissions_of([result("rank", "ranker", flat)], [result("rank", "ranker", sorted_)]))
    assert not skips.as_dict()
    assert items(mapped["rank"]) == {"1:x": {"a": "not in a bucket", "b": "relevant"},
                                     "1:y": {"a": "not in a bucket", "b": "not in a bucket"}}


def test_flat_ranker_list_with_an_id_twice_is_still_malformed():
    config, annotation, task = _example("ranker")
    broken = copy.deepcopy(annotation)
    broken["result"][0]["value"]["ranker"] = ["123", "123"]
    mapped, skips = _mapped(config, task, annotation, broken)
    assert skips.as_dict() == {"malformed value (ranker is not one list, or buckets of ids): Ranker 'rank'": 1}
    assert {annotator for _, _, annotator, _ in mapped["rank"].records} == {"1"}


def test_video_example_track_drawn_upwards_is_read():
    config, annotation, task = _example("video_bboxes")
    results = {r["id"]: r for r in annotation["result"]}
    upwards = results["FstfiS1SLJ"]
    assert {k["height"] for k in upwards["value"]["sequence"]} == {-15.972222222222221}
    mapped, skips = _mapped(config, task, annotation, annotation)
    assert not skips.as_dict()
    labels = sorted(tuple(sorted(v.items())) for v in items(mapped["box"]).values())
    assert labels == [(("1", "Airplane"), ("2", "Airplane")), (("1", "Car"), ("2", "Car")),
                      (("1", "Possum"), ("2", "Possum"))]
    # The track's first keyframe: x 21.64, y 92.08, width 12.89, height -15.97 covers y 76.11 to 92.08.
    geometry = track(upwards["value"], upwards, (), MappingOptions())
    frames, boxes = geometry.shape
    assert frames[0] == 33 and geometry.bounds == (33.0, 104.0)
    np.testing.assert_allclose(boxes[0], [21.640625, 92.08333333333333 - 15.972222222222221,
                                          21.640625 + 12.890625, 92.08333333333333])


def test_video_track_drawn_upwards_matches_the_same_track_drawn_downwards():
    config, annotation, task = _example("video_bboxes")
    downwards = copy.deepcopy(annotation)
    for result_ in downwards["result"]:
        for keyframe in result_["value"]["sequence"]:
            if keyframe["height"] < 0:
                keyframe["y"] += keyframe["height"]
                keyframe["height"] = -keyframe["height"]
    mapped, skips = _mapped(config, task, annotation, downwards)
    assert not skips.as_dict()
    assert len(items(mapped["box"])) == 3
    assert all(len(set(labels.values())) == 1 and len(labels) == 2 for labels in items(mapped["box"]).values())


BOXES = """<View><Image name="image" value="$image"/>
  <RectangleLabels name="label" toName="image"><Label value="Car"/></RectangleLabels></View>"""


@pytest.mark.parametrize("drawn", [
    {"x": 30, "y": 50, "width": -20, "height": -30},  # from the bottom-right corner
    {"x": 10, "y": 50, "width": 20, "height": -30},  # upwards
    {"x": 30, "y": 20, "width": -20, "height": 30},  # to the left
])
def test_box_with_negative_size_is_the_box_from_its_top_left_corner(drawn):
    plain = {"x": 10, "y": 20, "width": 20, "height": 30, "rotation": 0, "rectanglelabels": ["Car"]}
    mapped, skips = run(BOXES, submissions_of([result("label", "rectanglelabels", plain)],
                                              [result("label", "rectanglelabels", {**plain, **drawn})]))
    assert not skips.as_dict()
    assert items(mapped["label"]) == {"1:10-20-20-30": {"a": "Car", "b": "Car"}}


def test_rotated_box_with_negative_size_covers_the_same_place():
    # A box rotated 90 degrees around (50, 50) with width -10 reaches from y 40 to 50; drawn from (50, 40) with
    # width 10 it is the same place.
    value = {"x": 50, "y": 50, "width": -10, "height": 5, "rotation": 90}
    assert normalised_box(50, 50, -10, 5, 90) == pytest.approx((50, 40, 10, 5))
    geometry = box(value, {}, (), MappingOptions())
    same = box({"x": 50, "y": 40, "width": 10, "height": 5, "rotation": 90}, {}, (), MappingOptions())
    assert geometry.key == same.key
    assert geometry.shape.symmetric_difference(same.shape).area == pytest.approx(0, abs=1e-9)


def test_box_of_zero_width_is_still_not_read():
    assert box({"x": 10, "y": 20, "width": 0, "height": -5}, {}, (), MappingOptions()) is None
