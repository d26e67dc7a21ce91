"""Label Studio's JSON export read offline: broken files, duplicates, old exports, other formats refused."""

import json

import pytest

from plugin.export import export_project, read_export


def test_broken_exports_are_clear_errors(tmp_path):
    path = tmp_path / "export.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="is not a JSON export"):
        read_export(path)
    path.write_text('{"tasks": []}')
    with pytest.raises(ValueError, match="a list of tasks"):
        read_export(path)
    with pytest.raises(ValueError, match="does not exist"):
        read_export(tmp_path / "missing.json")


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_duplicate_task_ids_are_merged_by_annotation_id(tmp_path):
    first = {"id": 1, "data": {"t": "a"}, "annotations": [{"id": 10, "completed_by": 1, "result": []}]}
    second = {"id": 1, "data": {"t": "a"}, "annotations": [{"id": 10, "completed_by": 1, "result": []},
                                                           {"id": 11, "completed_by": 2, "result": []}]}
    tasks = read_export(_write(tmp_path, "twice.json", [first, second, {"id": 2, "annotations": []}]))
    assert [t["id"] for t in tasks] == [1, 2]
    assert [a["id"] for a in tasks[0]["annotations"]] == [10, 11]


def test_pre_1_0_completions_are_read_as_annotations(tmp_path):
    old = [{"id": 3, "data": {"text": "x"}, "completions": [{"id": 5, "completed_by": 2, "result": []}]}]
    (task,) = read_export(_write(tmp_path, "old.json", old))
    assert task["annotations"] == old[0]["completions"] and "completions" not in task


@pytest.mark.parametrize(("name", "content", "message"), [
    ("project.json", [{"id": 1, "text": "x", "annotator": 3, "annotation_id": 4, "sentiment": "positive"}], "JSON-MIN"),
    ("project.csv", "id,text,annotator,annotation_id\n1,x,3,4\n", "CSV export"),
    ("project.tsv", "id\ttext\tannotator\n1\tx\t3\n", "TSV export"),
    ("project.json", "id,text,annotator,sentiment\n1,x,3,positive\n", "CSV export"),
])
def test_other_export_formats_are_refused_naming_the_json_export(tmp_path, name, content, message):
    with pytest.raises(ValueError, match=message) as error:
        read_export(_write(tmp_path, name, content))
    assert "export the project as JSON" in str(error.value) and "\n" not in str(error.value)


def test_an_export_s_controls_come_from_its_config_else_from_its_results(tmp_path):
    task = {"id": 1, "data": {"text": "x"}, "annotations": [
        {"id": 5, "completed_by": 2, "result": [{"from_name": "sentiment", "to_name": "text", "type": "choices",
                                                 "value": {"choices": ["pos"]}}]}]}
    path = _write(tmp_path, "one.json", [task])
    tasks, inferred = export_project(path)
    assert [t["id"] for t in tasks] == [1] and list(inferred) == ["sentiment"]
    config = ('<View><Text name="text" value="$text"/><Choices name="mood" toName="text">'
              '<Choice value="pos"/></Choices></View>')
    _, given = export_project(path, label_config=config)
    assert list(given) == ["mood"] and given["mood"].tag == "choices"


def test_reading_an_export_needs_no_label_studio_client():
    import subprocess
    import sys

    code = "import sys, plugin.export; print('plugin.labelstudio' in sys.modules, 'label_studio_sdk.client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
