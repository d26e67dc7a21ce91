"""Write tests/data/spans/lsf_{audio,paragraphs,hypertext,timeseries}.json from label-studio-frontend's examples.

Usage (a checkout of HumanSignal/label-studio-frontend, see SOURCE.md)::

    python tests/data/spans/lsf_spans_export.py PATH/TO/label-studio-frontend

Each example holds one annotation (annotator 1, copied unchanged with the
example's task data and config). Annotator 2 is made here from it by the
edits listed in ``SECOND``, so that each export has two annotators who agree
on some units and not on others; SOURCE.md lists the edits too.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

# name -> (example folder, where its task data is: "tasks" (tasks.json[0]) or "annotation" (annotations/1.json))
EXAMPLES = {
    "audio": ("audio_regions", "tasks"),
    "paragraphs": ("phrases", "annotation"),
    "hypertext": ("rich_text_html", "tasks"),
    "timeseries": ("timeseries_single", "tasks"),
}


def _audio(result: list[dict]) -> list[dict]:
    # The Beat region 0.5 s later at both ends; the Other region relabelled Voice.
    for item in result:
        if item.get("id") == "SsGrpVgy_C":
            item["value"]["start"] += 0.5
            item["value"]["end"] += 0.5
        if item.get("id") == "JhxupEJWlW":
            item["value"]["labels"] = ["Voice"]
    return result


def _paragraphs(result: list[dict]) -> list[dict]:
    # The one region (phrases 2 to 4) relabelled Random talk, and phrase 1 ("Hate what?") marked Random talk.
    result[0]["value"]["paragraphlabels"] = ["Random talk"]
    result.append({"id": "second0001", "from_name": "ner", "to_name": "text", "source": "$dialogue",
                   "type": "paragraphlabels", "value": {"start": "1", "end": "1", "startOffset": 0, "endOffset": 10,
                                                        "text": "Hate what?", "paragraphlabels": ["Random talk"]}})
    return result


def _hypertext(result: list[dict]) -> list[dict]:
    # "Vincent: Look, Mr. Wolfe" (labelled Date) relabelled Person; "The Wolf" shortened to "Wolf" (4 characters later).
    for item in result:
        if item["id"] == "Umb_V5CIey":
            item["value"]["hypertextlabels"] = ["Person"]
        if item["id"] == "SLNxK0a8oW":
            item["value"]["startOffset"] += 4
            item["value"]["globalOffsets"]["start"] += 4
            item["value"]["text"] = item["value"]["text"][4:]
    return result


def _timeseries(result: list[dict]) -> list[dict]:
    # The Run region 2 later at both ends, and one instant (start == end) marked Run at 40.
    for item in result:
        if item["id"] == "Oek-tTCZ6_":
            item["value"]["start"] += 2
            item["value"]["end"] += 2
    result.append({"id": "second0001", "from_name": "label", "to_name": "ts", "type": "timeserieslabels",
                   "value": {"start": 40, "end": 40, "instant": True, "timeserieslabels": ["Run"]}})
    return result


SECOND = {"audio": _audio, "paragraphs": _paragraphs, "hypertext": _hypertext, "timeseries": _timeseries}


def export(root: Path, name: str) -> tuple[list[dict], str]:
    """One example as an export with annotators 1 (the example's) and 2 (made by ``SECOND``), and its config."""
    folder, data_from = EXAMPLES[name]
    base = root / "examples" / folder
    annotation_file = json.loads((base / "annotations" / "1.json").read_text())
    if data_from == "tasks":
        data = json.loads((base / "tasks.json").read_text())[0]["data"]
    else:
        data = annotation_file["data"]
    data = {key: value for key, value in data.items() if key != "predictions"}
    first = annotation_file["annotations"][0]["result"]
    annotations = [{"id": 1, "completed_by": 1, "result": copy.deepcopy(first)},
                   {"id": 2, "completed_by": 2, "result": SECOND[name](copy.deepcopy(first))}]
    for annotation in annotations:
        annotation.update(was_cancelled=False, ground_truth=False, task=1)
    return [{"id": 1, "data": data, "annotations": annotations}], (base / "config.xml").read_text()


def main(root: str) -> None:
    here = Path(__file__).resolve().parent
    for name in EXAMPLES:
        tasks, config = export(Path(root), name)
        (here / f"lsf_{name}.json").write_text(json.dumps(tasks, indent=1, ensure_ascii=False) + "\n")
        (here / f"lsf_{name}_config.xml").write_text(config)


if __name__ == "__main__":
    main(sys.argv[1])
