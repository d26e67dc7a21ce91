"""Real result JSON from Label Studio's public test data (tests/data/real, sources in SOURCES).

Every file there is run through ``ls-agreement sync --export FILE --json`` (with ``FILE``'s ``<name>_config.xml``
as ``--label-config`` where the source has one): it is either scored, with a summary whose counts add up to what
the file holds, or refused in one line on stderr (:data:`REFUSED`). A file dropped into the directory is picked
up without editing this module.

The files whose tasks are a JSON export's (a task id and a list of annotations each) are also mapped with their
first annotation copied to a second annotator (inferred controls where the source has no config), who then
agrees perfectly with the first on every control.
"""

import copy
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from agreement import label_counts, spa
from plugin.cli import main
from plugin.mapping import map_project
from plugin.mapping.annotations import BUG_SKIP, GROUND_TRUTH_SKIP, Skips, annotator_key, collect_submissions
from plugin.mapping.labelconfig import infer_controls, parse_label_config
from plugin.settings import MappingOptions
from tests.plugin.conftest import DATA

REAL = DATA / "real"
FILES = sorted(REAL.glob("*_data.json"))
# Written from label_config_repeater.json beside data_repeater.json in label-studio-sdk (same names and labels).
REPEATER = """<View><Repeater on="$images" indexFlag="{{idx}}">
  <Image name="page_{{idx}}" value="$images[{{idx}}].url"/>
  <RectangleLabels name="labels_{{idx}}" toName="page_{{idx}}">
    <Label value="Document Title"/><Label value="Document Date"/></RectangleLabels>
  <Taxonomy name="categories_{{idx}}" toName="page_{{idx}}" perRegion="true">
    <Choice value="Archaea"/><Choice value="Bacteria"/><Choice value="Eukarya"/><Choice value="Human"/>
    <Choice value="Oppossum"/><Choice value="Extraterrestrial"/></Taxonomy>
</Repeater></View>"""

# Files the command refuses by design, and what its one line says.
NOT_A_LIST = "is not a Label Studio JSON export (a list of tasks)"
REFUSED = {
    # A single task object (Label Studio's import sample), not the list an export is.
    "previous_export": NOT_A_LIST,
    # A pre-1.0 completions file: one task object with "completions", not an export's list.
    "converter_completions_ner": NOT_A_LIST,
    # JSON-MIN drops result types, region ids and skipped annotations.
    "ocr_json_min": "is a JSON-MIN export",
}
# What leaves a whole task or annotation out (the rest of the reasons name the control whose results they count).
TASK_SKIPS = frozenset({"task without an id", "task whose annotations are not a list"})
ANNOTATION_SKIPS = frozenset({
    "annotation that is not an object", "skipped (cancelled) annotation",
    "annotation without an annotator (completed_by)", GROUND_TRUTH_SKIP, "annotation whose result is not a list",
    "older annotation by the same annotator on a task (the latest counts)"})
RELATIONS_SKIP = ("control not in the config (a relation; add <Relations/> to the labeling config to score "
                  "relations): Relations")
NAMES_A_CONTROL = re.compile(r": [A-Za-z]+ '(?P<name>.*)'$")  # e.g. "label not in the config ('X'): Choices 'c'"

# What the doubled files hold that is not scored, by file: (reason, count).
EXPECTED_SKIPS = {
    "chat": {"unsupported tag (chat messages are content the annotator wrote, not a judgement): Chat 'chat'": 8},
    # The OBB export labels boxes "Butterfly", which its config (label_config_obb.xml) does not list.
    "yolo_obb": {"label not in the config ('Butterfly'): RectangleLabels 'label'": 48},
    # The keypoints export relates keypoints to boxes; its config (label_config_keypoints.xml) has no <Relations>.
    "yolo_keypoints": {RELATIONS_SKIP: 10},
    # doclang's data.json holds a skipped annotation first on one task.
    "doclang": {"skipped (cancelled) annotation": 2},
    # The tutorial's config names its Pairwise "pw"; the export it published answers "comparison".
    "rlhf_pairwise": {"control not in the config: Pairwise 'comparison'": 64},
    # Label Studio's test imports these boxes (from_name "label") into a project whose RectangleLabels is "objects".
    "ls_all_ground_truth": {"control not in the config: RectangleLabels 'label'": 4},
    # The pre-1.0 aggregated completions hold their result as a list of lists: the first one's result item, twice.
    "evalme_completions": {"result item that is not an object": 2},
}


# Doubled files with nothing to score: every result is counted in EXPECTED_SKIPS.
NOTHING_SCORED = frozenset({"chat", "rlhf_pairwise", "ls_all_ground_truth", "evalme_completions"})


def _as_task(entry):
    """A pre-1.0 task's ``completions`` as its annotations, as the export reader takes them."""
    if isinstance(entry, dict) and "annotations" not in entry and isinstance(entry.get("completions"), list):
        return {**{k: v for k, v in entry.items() if k != "completions"}, "annotations": entry["completions"]}
    return entry


def _tasks(path):
    data = json.loads(path.read_text(encoding="utf-8-sig"))
    return [_as_task(entry) for entry in (data if isinstance(data, list) else [data])]


def _name(path):
    return path.name.removesuffix("_data.json")


def _config_text(name):
    if name == "repeater":
        return REPEATER
    config = REAL / f"{name}_config.xml"
    return config.read_text() if config.exists() else None


def _controls(name, tasks):
    text = _config_text(name)
    return parse_label_config(text) if text is not None else infer_controls(tasks)


def _is_export(tasks):
    """Whether every task has a task id and a list of annotations, as in Label Studio's JSON export."""
    return all(isinstance(t, dict) and type(t.get("id")) is int and isinstance(t.get("annotations"), list)
               for t in tasks) and any(t["annotations"] for t in tasks)


def _doubled(tasks):
    """Each task with its first annotation copied to a second annotator (tasks without one as they are)."""
    out = []
    for task in copy.deepcopy(tasks):
        if task["annotations"]:
            first = task["annotations"][0]
            twin = {**copy.deepcopy(first), "id": (first.get("id") or 0) + 100000, "completed_by": 999999,
                    "ground_truth": False, "import_id": None}
            first.update(ground_truth=False, import_id=None, completed_by=first.get("completed_by") or 1)
            task["annotations"] = [first, twin]
        out.append(task)
    return out


EXPORTS = [path for path in FILES if _is_export(_tasks(path))]


@pytest.mark.parametrize("path", EXPORTS, ids=_name)
def test_real_results_are_scored_or_counted(path):
    name = _name(path)
    tasks = _doubled(_tasks(path))
    controls = _controls(name, tasks)
    skips = Skips()
    submissions = collect_submissions(tasks, skips)
    mapped = map_project(controls, submissions, skips, MappingOptions())
    assert skips.as_dict() == EXPECTED_SKIPS.get(name, {}), name
    scored = [m for m in mapped.values() if m.records]
    assert scored or name in NOTHING_SCORED, name
    for control in scored:
        value = spa(label_counts(control.rows, categories=control.categories))
        assert value == pytest.approx(1.0), (name, control.control.name)


# --- every file through the command ---



def _counted(annotation):
    """Whether an annotation counts: submitted by a known annotator, made in Label Studio, with a list of results."""
    imported = annotation.get("import_id") is not None or ("updated_by" in annotation and
                                                            annotation["updated_by"] is None)
    return (not annotation.get("was_cancelled") and annotator_key(annotation.get("completed_by")) is not None
            and not (annotation.get("ground_truth") and imported) and isinstance(annotation.get("result"), list))


class Held:
    """What an export file holds, read apart from the command: its tasks, annotations and counted results."""

    def __init__(self, path: Path) -> None:
        tasks, self.without_id = {}, 0
        for entry in _tasks(path):
            if not isinstance(entry, dict) or entry.get("id") is None:
                self.without_id += 1
                continue
            assert type(entry["id"]) is int, "the real files' task ids are whole numbers"
            annotations = tasks.setdefault(entry["id"], [])
            known = {a.get("id") for a in annotations if isinstance(a, dict) and a.get("id") is not None}
            for annotation in entry.get("annotations") or []:  # a task met again: its annotations once each by id
                if not (isinstance(annotation, dict) and annotation.get("id") in known):
                    annotations.append(annotation)
        self.tasks = tasks
        self.n_annotations = sum(len(a) for a in tasks.values())
        counted = [(task, a) for task, annotations in tasks.items() for a in annotations
                   if isinstance(a, dict) and _counted(a)]
        self.annotators = {annotator_key(a["completed_by"]) for _, a in counted}
        self.submissions = {(task, annotator_key(a["completed_by"])) for task, a in counted}
        # The controls of every counted result, and the region ids each result shares within its annotation.
        self.results = [(r.get("from_name") if str(r.get("type", "")).lower() != "relation" else "relations",
                         (task, id(a), r.get("id")))
                        for task, a in counted for r in a["result"] if isinstance(r, dict)]


def _control_of(name, controls):
    """The control a result's ``from_name`` belongs to: its own, or a repeater's pattern (``labels_{{idx}}``)."""
    if name in controls or not isinstance(name, str):
        return name
    patterns = [c for c in controls if re.fullmatch(r"(?:.*\{\{\w+\}\}.*)", c)]
    return next((c for c in patterns
                 if re.fullmatch(".+".join(map(re.escape, re.split(r"\{\{\w+\}\}", c))), name)), name)


def _run(path, tmp_path, capsys):
    name = _name(path)
    args = ["sync", "--export", str(path), "--json", "--quiet"]
    text = _config_text(name)
    if text is not None:
        config = tmp_path / "config.xml"
        config.write_text(text)
        args += ["--label-config", str(config)]
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _bug_traceback(text):
    """The tracebacks kept in the files a bug's line names (for the assertion message)."""
    files = re.findall(r"its traceback is in (\S+?\.txt)", text)
    return "\n".join(Path(f).read_text() for f in files if Path(f).exists())


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_each_real_export_is_scored_or_refused_in_one_line(path, tmp_path, capsys):
    name = _name(path)
    code, out, err = _run(path, tmp_path, capsys)
    assert code in (0, 1, 2), f"exit {code}: {err}\n{_bug_traceback(err)}"
    if name in REFUSED:
        assert (code, out) == (2, "") and err.count("\n") == 1 and REFUSED[name] in err, err
        return
    assert code != 2, err
    summary = json.loads(out)
    assert code == (1 if summary["tasks_failed"] else 0)
    assert summary["not_scored"] == {}, _bug_traceback(json.dumps(summary["not_scored"]))
    skipped, controls = summary["skipped"], summary["controls"]
    assert not any(reason.startswith(BUG_SKIP) for reason in skipped), skipped

    held = Held(path)
    assert summary["n_tasks"] == len(held.tasks)
    assert skipped.get("task without an id", 0) == held.without_id
    # Every annotation of a task is counted or left out under a reason of its own.
    assert held.n_annotations == summary["n_annotations"] + sum(skipped.get(r, 0) for r in ANNOTATION_SKIPS)
    assert summary["n_annotations"] == len(held.submissions)
    assert summary["n_annotators"] == len(held.annotators)

    # Every other reason names the control whose results it counts.
    named = Counter()
    for reason, count in skipped.items():
        if reason in TASK_SKIPS | ANNOTATION_SKIPS or reason.startswith("prediction") or reason == RELATIONS_SKIP:
            continue
        match = NAMES_A_CONTROL.search(reason)
        assert match, f"a reason that names no control: {reason!r}"
        named[match["name"]] += count
    # Every counted result is scored (its control has items, or its region is another scored control's) or
    # counted under a reason that names its control.
    scored = {c for c, block in controls.items() if block["n_items"]}
    results = [(_control_of(name, controls), where) for name, where in held.results]
    scored_regions = {where for control, where in results if control in scored}
    for control, where in results:
        assert (control in scored or where in scored_regions or named[control]
                or (control == "relations" and RELATIONS_SKIP in skipped)), (control, skipped)

    for block in controls.values():
        assert block["n_annotators"] <= summary["n_annotators"]
        assert block["n_pairable_items"] <= block["n_items"]
        assert block["n_items"] <= block["n_labels"] <= block["n_items"] * block["n_annotators"]
        # annotations (task and annotator pairs) that answered the control: each gave a label or more
        assert block["n_annotations"] <= min(block["n_labels"], summary["n_annotations"])
        assert block["spa"] is None or 0 <= block["spa"] <= 1
        if block["n_pairable_items"] == 0:
            assert block["spa"] is None
    if _config_text(name) is not None:
        assert not summary["config_inferred"]


def _summary(name, tmp_path, capsys):
    code, out, err = _run(REAL / f"{name}_data.json", tmp_path, capsys)
    assert code == 0, err
    return json.loads(out)


def _items(block):
    return {k: block[k] for k in ("n_items", "n_pairable_items", "n_annotations", "n_labels", "n_annotators", "spa")}


def test_an_import_file_without_task_ids_is_skipped_task_by_task(tmp_path, capsys):
    # Label Studio's import samples have no task ids (Label Studio gives them on import): 3, 6 and 2 tasks.
    for name, n in [("ls_ground_truth_imports", 3), ("ls_data_manager", 6), ("ls_email_annotators", 2)]:
        summary = _summary(name, tmp_path, capsys)
        assert (summary["n_tasks"], summary["skipped"]) == (0, {"task without an id": n}), name


def test_one_annotator_by_an_unknown_id_is_counted_with_nothing_to_pair(tmp_path, capsys):
    # One task, annotated "Cat" by user 99999 (whom Label Studio's import refuses; offline, an id is an annotator).
    summary = _summary("ls_unknown_annotator", tmp_path, capsys)
    assert (summary["n_tasks"], summary["n_annotations"], summary["n_annotators"], summary["skipped"]) == (1, 1, 1, {})
    assert _items(summary["controls"]["label"]) == {"n_items": 1, "n_pairable_items": 0, "n_annotations": 1,
                                                    "n_labels": 1, "n_annotators": 1, "spa": None}


def test_annotations_without_an_annotator_are_left_out_and_a_ground_truth_is_still_a_reference(tmp_path, capsys):
    # Two tasks, each with one ground-truth box and no completed_by; the boxes answer "label", the config "objects".
    summary = _summary("ls_all_ground_truth", tmp_path, capsys)
    assert (summary["n_tasks"], summary["n_annotations"]) == (2, 0)
    assert summary["skipped"] == {"annotation without an annotator (completed_by)": 2,
                                  "in a reference: control not in the config: RectangleLabels 'label'": 2}
    # The timeseries example's one annotation has no completed_by either.
    summary = _summary("lsf_timeseries", tmp_path, capsys)
    assert (summary["n_tasks"], summary["n_annotations"]) == (1, 0)
    assert summary["skipped"] == {"annotation without an annotator (completed_by)": 1}


def test_results_of_a_control_the_config_lacks_are_counted_against_it(tmp_path, capsys):
    # 32 tasks, one pairwise answer each from user 2, all from "comparison"; the config's Pairwise is "pw".
    summary = _summary("rlhf_pairwise", tmp_path, capsys)
    assert (summary["n_tasks"], summary["n_annotations"], summary["n_annotators"]) == (32, 32, 1)
    assert summary["skipped"] == {"control not in the config: Pairwise 'comparison'": 32}
    assert summary["controls"]["pw"]["n_items"] == 0


def test_single_and_multiple_choices_of_one_annotator(tmp_path, capsys):
    # 3 tasks by one annotator; turn 1 answered on each. A multiple-choice control's items are the task x its
    # labels (7 intents), a single choice's the task.
    summary = _summary("multi_turn_chat", tmp_path, capsys)
    assert (summary["n_tasks"], summary["n_annotations"], summary["n_annotators"]) == (3, 3, 1)
    controls = summary["controls"]
    assert _items(controls["turn1_user_intent"]) == {"n_items": 21, "n_pairable_items": 0, "n_annotations": 3,
                                                     "n_labels": 21, "n_annotators": 1, "spa": None}
    assert _items(controls["turn1_response_address_intent"]) == {"n_items": 3, "n_pairable_items": 0,
                                                                 "n_annotations": 3, "n_labels": 3, "n_annotators": 1,
                                                                 "spa": None}


def test_per_region_transcriptions_on_boxes_and_polygons(tmp_path, capsys):
    # One annotation: two rectangles and two polygons, each labeled (Labels "label") and transcribed (per region).
    summary = _summary("ocr_per_region", tmp_path, capsys)
    controls = summary["controls"]
    assert summary["skipped"] == {}
    assert (controls["label"]["n_items"], controls["transcription"]["n_items"]) == (4, 4)
    # A tool's region labeled by a labels control is that control's region.
    assert (controls["bbox"]["n_items"], controls["poly"]["n_items"]) == (0, 0)


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
