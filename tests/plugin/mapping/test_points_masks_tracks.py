"""Keypoints, brush masks, video tracks and intervals: each family's geometry either side of its threshold."""

import numpy as np
import pytest
from label_studio_sdk.converter.brush import mask2rle

from plugin.mapping.masks import brush, reduce_mask
from plugin.mapping.video import track
from plugin.settings import MappingOptions
from tests.plugin.mapping.helpers import grouping, result, run, submissions_of

OPTIONS = MappingOptions()


def test_keypoints_match_within_a_share_of_the_image_diagonal():
    config = """<View><Image name="image" value="$image"/>
      <KeyPointLabels name="kp" toName="image"><Label value="eye"/></KeyPointLabels></View>"""
    # 2% of the diagonal of the 100 x 100 percent square is 2.828 percent.
    for dx, matched in ((2.8, True), (2.9, False)):
        a = result("kp", "keypointlabels", {"x": 10, "y": 10, "width": 1, "keypointlabels": ["eye"]}, "p1")
        b = result("kp", "keypointlabels", {"x": 10 + dx, "y": 10, "width": 1, "keypointlabels": ["eye"]}, "p2")
        mapped, _ = run(config, submissions_of([a], [b]))
        assert len(grouping(mapped["kp"])) == (1 if matched else 2), dx


def _mask(height, width, rows, columns):
    mask = np.zeros((height, width), dtype=np.uint8)
    mask[rows, columns] = 255
    return mask


def _brush(mask, label="road", rid="m"):
    return result("brush", "brushlabels", {"format": "rle", "rle": mask2rle(mask), "brushlabels": [label]}, rid,
                  original_width=mask.shape[1], original_height=mask.shape[0])


CONFIG = """<View><Image name="image" value="$image"/>
  <BrushLabels name="brush" toName="image"><Label value="road"/><Label value="sky"/></BrushLabels></View>"""


def test_masks_decoded_with_the_sdk_converter_match_by_iou():
    # 40 x 40 squares in a 100 x 100 image, shifted by 13 columns: IoU = 27/53 = 0.509; by 14: 26/54 = 0.481.
    base = _mask(100, 100, slice(10, 50), slice(10, 50))
    for shift, matched in ((13, True), (14, False)):
        other = _mask(100, 100, slice(10, 50), slice(10 + shift, 50 + shift))
        geometry_a = brush(_brush(base)["value"], _brush(base), (), OPTIONS)
        geometry_b = brush(_brush(other)["value"], _brush(other), (), OPTIONS)
        assert geometry_a.family.similarity(geometry_a.shape, geometry_b.shape) == pytest.approx(
            (40 - shift) / (40 + shift))
        mapped, skips = run(CONFIG, submissions_of([_brush(base)], [_brush(other)]))
        assert len(grouping(mapped["brush"])) == (1 if matched else 2)
        assert skips.total == 0


def test_masks_that_touch_share_nothing_at_full_resolution():
    left = _mask(100, 100, slice(0, 100), slice(0, 50))
    right = _mask(100, 100, slice(0, 100), slice(50, 100))
    a = brush(_brush(left)["value"], _brush(left), (), OPTIONS)
    b = brush(_brush(right)["value"], _brush(right), (), OPTIONS)
    assert a.family.similarity(a.shape, b.shape) == 0.0


def test_reduced_masks_keep_any_covered_pixel():
    mask = np.zeros((1030, 10), dtype=bool)
    mask[1029, 0] = True
    factor, reduced = reduce_mask(mask, 512)
    assert factor == 3 and reduced.shape == (344, 4) and reduced.sum() == 1


def test_a_mask_with_a_hole():
    ring = _mask(100, 100, slice(10, 50), slice(10, 50))
    ring[20:40, 20:40] = 0  # 1600 - 400 = 1200 pixels
    full = _mask(100, 100, slice(10, 50), slice(10, 50))
    a = brush(_brush(ring)["value"], _brush(ring), (), OPTIONS)
    b = brush(_brush(full)["value"], _brush(full), (), OPTIONS)
    assert a.family.similarity(a.shape, b.shape) == pytest.approx(1200 / 1600)


def test_a_broken_rle_is_counted_not_fatal():
    bad = result("brush", "brushlabels", {"format": "rle", "rle": [1, 2, 3], "brushlabels": ["road"]}, "m",
                 original_width=10, original_height=10)
    mapped, skips = run(CONFIG, submissions_of([bad]))
    assert mapped["brush"].records == ()
    assert skips.as_dict() == {"malformed value (no readable position): BrushLabels 'brush'": 1}


def _track(*keyframes):
    return {"sequence": [{"frame": f, "x": x, "y": 10, "width": 20, "height": 20, "enabled": e}
                         for f, x, e in keyframes], "labels": ["car"], "framesCount": 100}


def test_video_tracks_are_compared_frame_by_frame_with_interpolation():
    a = track(_track((1, 10, True), (11, 30, True)), {}, (), OPTIONS)
    assert len(a.shape[0]) == 11 and a.shape[1][5][0] == pytest.approx(20)  # frame 6 halfway from x=10 to x=30
    same = track(_track((1, 10, True), (11, 30, True)), {}, (), OPTIONS)
    assert a.family.similarity(a.shape, same.shape) == pytest.approx(1.0)
    half = track(_track((1, 10, True), (6, 20, False)), {}, (), OPTIONS)  # ends at frame 6: 6 of 11 frames
    assert a.family.similarity(a.shape, half.shape) == pytest.approx(6 / 11)
    config = """<View><Video name="video" value="$video"/><VideoRectangle name="box" toName="video"/></View>"""
    first = result("box", "videorectangle", _track((1, 10, True), (11, 30, True)), "t1")
    second = result("box", "videorectangle", _track((1, 10, True), (6, 20, False)), "t2")
    third = result("box", "videorectangle", _track((1, 10, True), (4, 16, False)), "t3")  # 4 of 11 frames
    mapped, _ = run(config, submissions_of([first], [second]))
    assert grouping(mapped["box"]) == [(("a", "car"), ("b", "car"))]
    mapped, _ = run(config, submissions_of([first], [third]))
    assert grouping(mapped["box"]) == [(("a", "car"), ("b", "no region")), (("a", "no region"), ("b", "car"))]


def test_audio_spans_keep_fractions_of_a_second():
    # The case: two regions within one second were merged when seconds were truncated.
    config = """<View><Audio name="audio" value="$audio"/>
      <Labels name="speaker" toName="audio"><Label value="A"/><Label value="B"/></Labels></View>"""
    a = [result("speaker", "labels", {"start": 1.1, "end": 1.4, "labels": ["A"]}, "s1"),
         result("speaker", "labels", {"start": 1.5, "end": 1.9, "labels": ["B"]}, "s2")]
    b = [result("speaker", "labels", {"start": 1.12, "end": 1.41, "labels": ["A"]}, "s3"),
         result("speaker", "labels", {"start": 1.52, "end": 1.88, "labels": ["B"]}, "s4")]
    mapped, skips = run(config, submissions_of(a, b))
    assert grouping(mapped["speaker"]) == [(("a", "A"), ("b", "A")), (("a", "B"), ("b", "B"))]
    assert skips.total == 0


def test_intervals_either_side_of_the_threshold_and_timeline_ranges():
    config = """<View><TimeSeries name="ts" value="$csv"><Channel column="x"/></TimeSeries>
      <TimeSeriesLabels name="events" toName="ts"><Label value="Run"/></TimeSeriesLabels>
      <Video name="video" value="$video"/>
      <TimelineLabels name="timeline" toName="video"><Label value="Run"/></TimelineLabels></View>"""
    # [0, 10] against [d, 10 + d]: Jaccard (10 - d) / (10 + d), 0.5 at d = 10/3.
    for shift, count in ((3.3, 1), (3.4, 2)):
        a = result("events", "timeserieslabels", {"start": 0, "end": 10, "timeserieslabels": ["Run"]}, "e1")
        b = result("events", "timeserieslabels", {"start": shift, "end": 10 + shift, "timeserieslabels": ["Run"]}, "e2")
        assert len(grouping(run(config, submissions_of([a], [b]))[0]["events"])) == count
    dates = [result("events", "timeserieslabels", {"start": "2024-01-01T00:00:00", "end": "2024-01-01T01:00:00",
                                                   "timeserieslabels": ["Run"]}, "e")]
    assert len(run(config, submissions_of(dates, dates))[0]["events"].records) == 2
    # Frames 1..10 (end included) against 1..4: 4 / 10 < 0.5; against 1..6: 6 / 10.
    one = result("timeline", "timelinelabels", {"ranges": [{"start": 1, "end": 10}], "timelinelabels": ["Run"]}, "t")
    short = result("timeline", "timelinelabels", {"ranges": [{"start": 1, "end": 4}], "timelinelabels": ["Run"]}, "u")
    longer = result("timeline", "timelinelabels", {"ranges": [{"start": 1, "end": 6}], "timelinelabels": ["Run"]}, "v")
    assert len(grouping(run(config, submissions_of([one], [short]))[0]["timeline"])) == 2
    assert len(grouping(run(config, submissions_of([one], [longer]))[0]["timeline"])) == 1


def test_a_labels_control_with_a_keypoint_tool_reads_points():
    config = """<View><Image name="image" value="$image"/><Labels name="label" toName="image"><Label value="eye"/>
      </Labels><KeyPoint name="point" toName="image"/></View>"""
    a = [result("point", "keypoint", {"x": 10, "y": 10, "width": 1}, "p"),
         result("label", "labels", {"x": 10, "y": 10, "width": 1, "labels": ["eye"]}, "p")]
    mapped, skips = run(config, submissions_of(a, a))
    assert grouping(mapped["label"]) == [(("a", "eye"), ("b", "eye"))] and skips.total == 0


def test_bitmasks_are_read_from_their_png_data_url():
    import base64
    import io

    from PIL import Image

    from plugin.mapping.masks import bitmask

    def url(columns):
        pixels = np.zeros((20, 40, 4), dtype=np.uint8)
        pixels[5:15, columns, 3] = 255
        buffer = io.BytesIO()
        Image.fromarray(pixels, "RGBA").save(buffer, format="PNG")
        return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()

    a = bitmask({"imageDataURL": url(slice(0, 20))}, {}, (), OPTIONS)
    b = bitmask({"imageDataURL": url(slice(10, 30))}, {}, (), OPTIONS)
    assert a.family.similarity(a.shape, b.shape) == pytest.approx(10 / 30)
    assert bitmask({"imageDataURL": "data:image/png;base64,AAAA"}, {}, (), OPTIONS) is None
