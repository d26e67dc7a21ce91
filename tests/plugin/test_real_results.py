"""Real result JSON from Label Studio's public test data (tests/data/real, sources in SOURCES).

Each file is mapped with its labeling config (inferred from the results where
the source has none). Every result is scored or counted; an annotation
copied to a second annotator agrees perfectly with the first on every control.
"""

import copy
import json

import pytest

from agreement import label_counts, spa
from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, collect_submissions
from plugin.mapping.labelconfig import infer_controls, parse_label_config
from plugin.settings import MappingOptions
from tests.plugin.conftest import DATA

REAL = DATA / "real"
# Written from label_config_repeater.json beside data_repeater.json in label-studio-sdk (same names and labels).
REPEATER = """<View><Repeater on="$images" indexFlag="{{idx}}">
  <Image name="page_{{idx}}" value="$images[{{idx}}].url"/>
  <RectangleLabels name="labels_{{idx}}" toName="page_{{idx}}">
    <Label value="Document Title"/><Label value="Document Date"/></RectangleLabels>
  <Taxonomy name="categories_{{idx}}" toName="page_{{idx}}" perRegion="true">
    <Choice value="Archaea"/><Choice value="Bacteria"/><Choice value="Eukarya"/><Choice value="Human"/>
    <Choice value="Oppossum"/><Choice value="Extraterrestrial"/></Taxonomy>
</Repeater></View>"""
# What the files hold that is not scored, by file: (reason, count).
EXPECTED_SKIPS = {
    "chat": {"unsupported tag (chat messages are content the annotator wrote, not a judgement): Chat 'chat'": 8},
    # The OBB export labels boxes "Butterfly", which its config (label_config_obb.xml) does not list.
    "yolo_obb": {"label not in the config ('Butterfly'): RectangleLabels 'label'": 48},
    # The keypoints export relates keypoints to boxes; its config (label_config_keypoints.xml) has no <Relations>.
    "yolo_keypoints": {"control not in the config (a relation; add <Relations/> to the labeling config to score "
                       "relations): Relations": 10},
    # doclang's data.json holds a skipped annotation first on one task.
    "doclang": {"skipped (cancelled) annotation": 2},
}


def _tasks(path):
    data = json.loads(path.read_text())
    return data if isinstance(data, list) else [data]


def _controls(name, tasks):
    if name == "repeater":
        return parse_label_config(REPEATER)
    config = REAL / f"{name}_config.xml"
    return parse_label_config(config.read_text()) if config.exists() else infer_controls(tasks)


def _doubled(tasks):
    """Each task with its first annotation copied to a second annotator."""
    out = []
    for task in copy.deepcopy(tasks):
        first = task["annotations"][0]
        twin = {**copy.deepcopy(first), "id": (first.get("id") or 0) + 100000, "completed_by": 999999,
                "ground_truth": False, "import_id": None}
        first.update(ground_truth=False, import_id=None, completed_by=first.get("completed_by") or 1)
        task["annotations"] = [first, twin]
        out.append(task)
    return out


FILES = sorted(REAL.glob("*_data.json"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_real_results_are_scored_or_counted(path):
    name = path.stem.removesuffix("_data")
    tasks = _doubled(_tasks(path))
    controls = _controls(name, tasks)
    skips = Skips()
    submissions = collect_submissions(tasks, skips)
    mapped = map_project(controls, submissions, skips, MappingOptions())
    assert skips.as_dict() == EXPECTED_SKIPS.get(name, {}), name
    scored = [m for m in mapped.values() if m.records]
    assert scored or name == "chat", name
    for control in scored:
        value = spa(label_counts(control.rows, categories=control.categories))
        assert value == pytest.approx(1.0), (name, control.control.name)


def test_the_repeater_and_its_per_region_taxonomy():
    tasks = _doubled(_tasks(REAL / "repeater_data.json"))
    mapped = map_project(parse_label_config(REPEATER), collect_submissions(tasks, Skips()), Skips(), MappingOptions())
    box = "86:labels_0:19.4663-53.7079-20.3511-20.2247"  # the page-0 box of data_repeater.json, x-y-width-height
    assert mapped["labels_{{idx}}"].records == ((86, box, "1", "Document Title"), (86, box, "999999", "Document Title"))
    taxonomy = f"{box}/labels_{{{{idx}}}}:Archaea"  # the path selected on that box, per region
    assert mapped["categories_{{idx}}"].records == ((86, taxonomy, "1", "yes"), (86, taxonomy, "999999", "yes"))


def test_rotated_boxes_of_the_obb_export_are_matched_by_polygon_iou():
    tasks = _tasks(REAL / "yolo_obb_data.json")
    rotated = [r for t in tasks for a in t["annotations"] for r in a["result"] if r["value"].get("rotation")]
    assert rotated  # the file holds rotated boxes
    doubled = _doubled(tasks)
    mapped = map_project(_controls("yolo_obb", doubled), collect_submissions(doubled, Skips()), Skips(),
                         MappingOptions(box_iou=0.99))
    labels = {label for m in mapped.values() for *_, label in m.records}
    assert "no box" not in labels
