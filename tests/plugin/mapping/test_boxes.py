"""RectangleLabels: boxes matched by IoU."""

from plugin.mapping.annotations import Skips
from plugin.mapping.boxes import NO_BOX
from plugin.mapping.regions import box_iou
from plugin.settings import MappingOptions
from tests.plugin.conftest import FIRST, SECOND, THIRD, map_one


def test_overlapping_boxes_are_one_item(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "objects", MappingOptions(), Skips())
    rows = mapped.rows[mapped.rows["task"] == first]
    items = {item: dict(zip(g["annotator"], g["label"], strict=True)) for item, g in rows.groupby("item")}
    assert sorted(items.values(), key=len) == sorted([
        {FIRST: "car", SECOND: "car", THIRD: NO_BOX},
        {FIRST: NO_BOX, SECOND: NO_BOX, THIRD: "car"},
    ], key=len)


def test_iou():
    assert box_iou((10, 10, 40, 50), (11, 10, 41, 50)) == 29 * 40 / (2 * 1200 - 29 * 40)
    assert box_iou((0, 0, 1, 1), (2, 2, 3, 3)) == 0.0


def test_a_stricter_threshold_splits_the_pair(controls, submissions):
    first = min(submissions)
    mapped = map_one(controls, submissions, "objects", MappingOptions(box_iou=0.95), Skips())
    assert mapped.rows[mapped.rows["task"] == first]["item"].nunique() == 3
