"""Polygons, vectors, ellipses and rotated boxes: plane IoU on hand-made geometry, either side of the threshold."""

import math

import pytest

from plugin.mapping.boxes import BOX, box
from plugin.mapping.ellipses import ellipse
from plugin.mapping.polygons import plane_iou, polygon
from plugin.settings import MappingOptions
from tests.plugin.mapping.helpers import grouping, result, run, submissions_of

CONFIG = """<View><Image name="image" value="$image"/>
  <PolygonLabels name="poly" toName="image"><Label value="cat"/><Label value="dog"/></PolygonLabels>
  <EllipseLabels name="ell" toName="image"><Label value="cat"/></EllipseLabels>
  <RectangleLabels name="box" toName="image"><Label value="cat"/></RectangleLabels></View>"""
OPTIONS = MappingOptions()


def square(x0, y0, side):
    return [[x0, y0], [x0 + side, y0], [x0 + side, y0 + side], [x0, y0 + side]]


def shape(value, parse=polygon, **extra):
    return parse(value, extra, (), OPTIONS).shape


def test_polygon_iou_just_above_and_just_below_the_threshold():
    # Two 10x10 squares shifted by d along x: IoU = (10 - d) / (10 + d); 0.5 at d = 10/3.
    for shift, matched in ((3.3, True), (3.4, False)):
        a = result("poly", "polygonlabels", {"points": square(0, 0, 10), "polygonlabels": ["cat"]}, "r1")
        b = result("poly", "polygonlabels", {"points": square(shift, 0, 10), "polygonlabels": ["cat"]}, "r2")
        mapped, skips = run(CONFIG, submissions_of([a], [b]))
        expected = [(("a", "cat"), ("b", "cat"))] if matched else [(("a", "cat"), ("b", "no region")),
                                                                   (("a", "no region"), ("b", "cat"))]
        assert grouping(mapped["poly"]) == expected, shift
        assert skips.total == 0
    assert plane_iou(shape({"points": square(0, 0, 10)}), shape({"points": square(10 / 3, 0, 10)})) \
        == pytest.approx(0.5)


def test_a_self_intersecting_polygon_is_repaired_not_dropped():
    bowtie = shape({"points": [[0, 0], [10, 10], [10, 0], [0, 10]]})
    assert bowtie.is_valid and bowtie.area == pytest.approx(50)


def test_a_region_with_a_hole_counts_only_its_ring():
    # Brush-like region with a hole, as a vector polygon ring minus an inner square (shapely geometry).
    outer = shape({"points": square(0, 0, 10)})
    hole = shape({"points": square(2.5, 2.5, 5)})
    ring = outer.difference(hole)
    assert plane_iou(ring, outer) == pytest.approx(75 / 100)
    assert plane_iou(ring, hole) == 0.0


def test_rotation_counts():
    # A 10x40 box rotated by 90 degrees around its top-left corner shares only that corner with itself unrotated.
    upright = box({"x": 50, "y": 50, "width": 10, "height": 40}, {}, (), OPTIONS)
    turned = box({"x": 50, "y": 50, "width": 10, "height": 40, "rotation": 90}, {}, (), OPTIONS)
    assert plane_iou(upright.shape, turned.shape) == pytest.approx(0.0, abs=1e-9)
    full_turn = box({"x": 50, "y": 50, "width": 10, "height": 40, "rotation": 360}, {}, (), OPTIONS)
    assert full_turn.shape == upright.shape and upright.family is BOX
    # A square rotated by 45 degrees about its corner against the same square: IoU from the overlap geometry.
    small = box({"x": 0, "y": 0, "width": 10, "height": 10}, {}, (), OPTIONS)
    diamond = box({"x": 0, "y": 0, "width": 10, "height": 10, "rotation": 45}, {}, (), OPTIONS)
    overlap = 100 * (math.sqrt(2) - 1)  # the square's part inside the rotated one
    assert plane_iou(small.shape, diamond.shape) == pytest.approx(overlap / (200 - overlap))


def test_rotation_is_taken_in_pixels_when_the_image_size_is_known():
    # 10% x 10% of a 200 x 100 image is 20 x 10 pixels; a 90-degree turn is then a 10 x 20 box.
    turned = box({"x": 50, "y": 50, "width": 10, "height": 10, "rotation": 90}, {"original_width": 200,
                                                                               "original_height": 100}, (), OPTIONS)
    minx, miny, maxx, maxy = turned.shape.bounds
    assert (maxx - minx, maxy - miny) == pytest.approx((10, 20))


def test_ellipse_iou_either_side_of_the_threshold():
    # Two circles of radius 10, centres d apart; IoU = 0.5 near d = 5.28 (lens area formula).
    def lens_iou(d, r=10):
        lens = 2 * r * r * math.acos(d / (2 * r)) - d / 2 * math.sqrt(4 * r * r - d * d)
        return lens / (2 * math.pi * r * r - lens)
    for d in (4.0, 6.0):
        a = ellipse({"x": 50, "y": 50, "radiusX": 10, "radiusY": 10}, {}, (), OPTIONS)
        b = ellipse({"x": 50 + d, "y": 50, "radiusX": 10, "radiusY": 10}, {}, (), OPTIONS)
        assert plane_iou(a.shape, b.shape) == pytest.approx(lens_iou(d), abs=0.005)
    one = result("ell", "ellipselabels", {"x": 50, "y": 50, "radiusX": 10, "radiusY": 10, "ellipselabels": ["cat"]})
    near = result("ell", "ellipselabels", {"x": 54, "y": 50, "radiusX": 10, "radiusY": 10, "ellipselabels": ["cat"]})
    far = result("ell", "ellipselabels", {"x": 56, "y": 50, "radiusX": 10, "radiusY": 10, "ellipselabels": ["cat"]})
    assert len(grouping(run(CONFIG, submissions_of([one], [near]))[0]["ell"])) == 1
    assert len(grouping(run(CONFIG, submissions_of([one], [far]))[0]["ell"])) == 2


def test_a_box_matches_a_polygon_of_the_same_place_in_one_labels_control():
    config = """<View><Image name="image" value="$image"/><Labels name="label" toName="image">
      <Label value="Text"/></Labels><Rectangle name="bbox" toName="image"/><Polygon name="poly" toName="image"/></View>"""
    a = [result("bbox", "rectangle", {"x": 0, "y": 0, "width": 10, "height": 10}, "r1"),
         result("label", "labels", {"x": 0, "y": 0, "width": 10, "height": 10, "labels": ["Text"]}, "r1")]
    b = [result("poly", "polygon", {"points": square(0, 0, 10)}, "r2"),
         result("label", "labels", {"points": square(0, 0, 10), "labels": ["Text"]}, "r2")]
    mapped, skips = run(config, submissions_of(a, b))
    assert grouping(mapped["label"]) == [(("a", "Text"), ("b", "Text"))]
    assert mapped["bbox"].records == () and mapped["poly"].records == () and skips.total == 0


def test_malformed_polygons_are_counted_with_control_and_tag():
    bad = [result("poly", "polygonlabels", {"points": [[0, 0], [1, 1]], "polygonlabels": ["cat"]}, "r1"),
           result("poly", "polygonlabels", {"points": square(0, 0, 10), "polygonlabels": ["horse"]}, "r2")]
    mapped, skips = run(CONFIG, submissions_of(bad))
    assert mapped["poly"].records == ()
    assert skips.as_dict() == {"malformed value (no readable position): PolygonLabels 'poly'": 1,
                               "label not in the config ('horse'): PolygonLabels 'poly'": 1}
