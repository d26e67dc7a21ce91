"""Label Studio's JSON export read offline: broken files, duplicates, old exports, other formats refused."""

import contextlib
import io
import json
import tracemalloc
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugin.labelstudio.export import iter_entries, open_export
from tests.exports import export_project, read_export
from tests.profiles import examples


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


@pytest.mark.parametrize("content", [[1, 2, 3], ["task"], [[{"id": 1}]]])
def test_a_list_without_a_task_is_refused_not_read_as_no_tasks(tmp_path, content):
    # before, [1, 2, 3] gave a report of 0 tasks with exit 0, the reason only in the page's notes
    with pytest.raises(ValueError, match=r"is not a Label Studio JSON export: none of its \d+ entries is a task"):
        read_export(_write(tmp_path, "numbers.json", content))


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

    code = ("import sys, plugin.labelstudio.export; "
            "print('plugin.labelstudio.client' in sys.modules, 'label_studio_sdk.client' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


json_values = st.recursive(st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False)
                           | st.text(max_size=12), lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=12)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(json_values, max_size=12), st.sampled_from(["", " ", "\n  ", "\t"]), st.integers(1, 7))
def test_a_streamed_export_reads_as_json_loads(tmp_path_factory, entries, space, chunk):
    """Any JSON list, however spaced, read a few characters at a time (numbers and strings cut anywhere), gives
    the entries json.loads gives."""
    path = tmp_path_factory.mktemp("stream") / "export.json"
    path.write_text(space + "[" + space + ("," + space).join(json.dumps(e) for e in entries) + space + "]" + space)
    with patch("plugin.labelstudio.export.CHUNK", chunk):
        assert list(iter_entries(path)) == json.loads(path.read_text())


@pytest.mark.parametrize(("content", "message"), [
    ('[{"id": 1}, {"id": 2', "Expecting"),
    ('[{"id": 1} {"id": 2}]', "expected ',' or ']'"),
    ('[{"id": 1}', "the file ends before its list does"),
    ('[{"id": 1}] [', "extra data after the list"),
    ('[{"id": 1}, ]', "Expecting value"),
    ('[{"id": 1}, ' + '[' * 100_000 + ']' * 100_000 + ']', "nested deeper than a JSON reader goes"),
])
def test_a_broken_export_is_one_line_naming_where(tmp_path, content, message):
    path = _write(tmp_path, "broken.json", content)
    with patch("plugin.labelstudio.export.CHUNK", 4), pytest.raises(ValueError, match=message) as error:
        read_export(path)
    assert "is not a JSON export" in str(error.value) and "at character" in str(error.value)
    assert "\n" not in str(error.value)


def test_an_export_is_read_a_chunk_at_a_time_never_whole(tmp_path):
    """Scanning and reading the tasks of an 8 MB export, 64 KiB at a time, holds a few chunks, not the file."""
    task = {"data": {"text": "x" * 300}, "annotations": [
        {"id": 0, "completed_by": {"id": 2, "email": "ann@example.com"},
         "result": [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": ["pos"]}}]}]}
    path = _write(tmp_path, "big.json", [{**task, "id": i} for i in range(20_000)])
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with patch("plugin.labelstudio.export.CHUNK", 1 << 16):
            export, controls = open_export(path)
            n = sum(1 for _ in export)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n == export.n_entries == 20_000 and list(controls) == ["sentiment"]
    assert export.people == {"2": "ann@example.com"} and export.duplicates == {}
    assert size > 8_000_000 and peak < size / 8


@given(st.lists(st.tuples(st.integers(1, 4), st.lists(st.integers(10, 14), max_size=3)), max_size=10))
def test_duplicate_tasks_merge_whatever_their_order(tmp_path_factory, copies):
    """Every copy of a task is merged into one: the first copy's data and annotations, then the later copies'
    annotations not seen before."""
    entries = [{"id": task, "data": {"copy": n}, "annotations": [{"id": a, "result": []} for a in annotations]}
               for n, (task, annotations) in enumerate(copies)]
    path = tmp_path_factory.mktemp("dups") / "export.json"
    path.write_text(json.dumps(entries))
    tasks = read_export(path)
    assert sorted(t["id"] for t in tasks) == sorted({task for task, _ in copies})
    for task in tasks:
        mine = [e for e in entries if e["id"] == task["id"]]
        assert task["data"] == mine[0]["data"]
        first = [a["id"] for a in mine[0]["annotations"]]  # the first copy's, as they are; then those not seen
        later = [a["id"] for e in mine[1:] for a in e["annotations"] if a["id"] not in first]
        assert [a["id"] for a in task["annotations"]] == first + list(dict.fromkeys(later))


def _summary(export, *options):
    from plugin.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sync", "--export", str(export), "--json", "--quiet", *options]) == 0
    return json.loads(out.getvalue())


def test_an_export_whose_results_show_each_control_s_kind_scores_as_with_its_config_and_says_what_it_guessed(tmp_path):
    from plugin.demo import CONFIG, simulated_export
    from plugin.mapping.labelconfig import INFERRED, PASS_CONFIG
    from plugin.summary import summary_text

    export, config = tmp_path / "export.json", tmp_path / "config.xml"
    export.write_text(json.dumps(simulated_export(120, seed=3)))
    config.write_text(CONFIG)
    inferred, configured = _summary(export), _summary(export, "--label-config", str(config))
    # a multiple-choice control is a label set over every choice seen, as over the config's (each was chosen)
    assert inferred["controls"]["topics"]["n_items"] == configured["controls"]["topics"]["n_items"] == 4 * 120
    assert inferred["flagged"] == configured["flagged"]
    for name in configured["controls"]:
        for key in ("n_items", "spa", "spa_ci", "alpha", "fleiss", "gwet", "labels", "augmented"):
            assert inferred["controls"][name].get(key) == configured["controls"][name].get(key), (name, key)
    # what it had to guess is said, once per control, with the way to give the config
    notes = {name: remarks["notes"] for name, remarks in inferred["config"].items() if remarks["notes"]}
    assert set(notes) == {"sentiment", "topics", "helpfulness"}
    assert notes["topics"] == [f"{INFERRED}: a label set over the 4 choices seen in the export (a choice nobody made "
                               "is no item)"]
    assert inferred["config_inferred"] and not configured["config_inferred"]
    assert summary_text(inferred).endswith(PASS_CONFIG) and PASS_CONFIG not in summary_text(configured)
