"""Region families from a running Label Studio: the live read, the JSON export and the sync all agree.

The project of tests/data/record_regions.py (every region family, per-region
TextArea, relations, Ranker, DateTime, multi-path Taxonomy, a Choice alias)
is built on a real Label Studio with three annotators who signed up.
"""

import json

import pytest
from label_studio_sdk import LabelStudio

from plugin.cli import main
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.localserver import sign_up
from plugin.mapping import map_project
from plugin.mapping.annotations import Skips, collect_submissions
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import Connection, MappingOptions
from tests.data.record_regions import CONFIG, build


@pytest.fixture(scope="module")
def project(label_studio):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    annotators = [sign_up(label_studio.url, f"regions{who}@example.com")[1] for who in range(3)]
    return build(label_studio.url, admin, annotators, tasks=2), admin


def _mapped(tasks):
    skips = Skips()
    mapped = map_project(parse_label_config(CONFIG), collect_submissions(tasks, skips), skips, MappingOptions())
    return {name: sorted(m.records, key=repr) for name, m in mapped.items()}, skips.as_dict()


def test_live_read_and_export_map_to_the_same_rows(label_studio, project):
    identifier, admin = project
    client = LabelStudioClient(Connection(url=label_studio.url, api_key=label_studio.token, page_size=100))
    live, live_skips = _mapped(list(client.tasks(identifier)))
    exported = admin.projects.exports.as_json(identifier)
    offline, offline_skips = _mapped(exported)
    assert live == offline and live_skips == offline_skips == {}
    scored = {name for name, rows in live.items() if rows}
    assert {"poly", "kp", "ell", "brush", "label", "transcription", "relations", "track", "timeline", "speaker",
            "events", "mood", "topics", "when", "rank"} <= scored


def test_a_task_read_alone_is_the_task_of_the_page_read(label_studio, project):
    # the read before a late write (plugin.keeper.passes): plain JSON as the pages are, every region family included
    identifier, admin = project
    client = LabelStudioClient(Connection(url=label_studio.url, api_key=label_studio.token, page_size=100))
    paged = {task["id"]: task for task in client.tasks(identifier)}
    alone = {task: client.task(task) for task in paged}
    assert _mapped(list(alone.values())) == _mapped(list(paged.values()))
    for task, read in alone.items():
        typed = admin.tasks.get(id=str(task)).model_dump(mode="json")  # what the SDK's model gave before
        assert {key: read[key] for key in typed if key in read} == {key: typed[key] for key in typed if key in read}
        assert read["annotations"] and {a["id"] for a in read["annotations"]} == {
            a["id"] for a in paged[task]["annotations"]}
    assert client.task(max(paged) + 1000) is None


def test_sync_of_the_project_equals_the_offline_scoring_of_its_export(label_studio, project, tmp_path, capsys):
    identifier, admin = project
    path = tmp_path / "export.json"
    path.write_text(json.dumps(admin.projects.exports.as_json(identifier)))
    config = tmp_path / "config.xml"
    config.write_text(CONFIG)
    summaries = []
    for source in (["--project", str(identifier), "--url", label_studio.url, "--api-key", label_studio.token],
                   ["--export", str(path), "--label-config", str(config)]):
        assert main(["sync", *source, "--dry-run", "--json", "--quiet"]) == 0
        summaries.append(json.loads(capsys.readouterr().out))
    live, offline = summaries
    for summary in summaries:  # a live read names the annotators (Label Studio's users); an export cannot
        for control in summary["controls"].values():
            for row in control["annotators"]:
                row.pop("name")
            for row in (control.get("consensus") or {}).get("annotators", {}).values():
                row.pop("name")
    assert live["controls"] == offline["controls"] and live["n_annotations"] == offline["n_annotations"] == 6
