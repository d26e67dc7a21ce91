"""A span project (Labels on Text) on a real Label Studio: ``sync`` writes each task's F1 and gamma into its meta.

Three annotators who signed up mark entities through the API: some the same,
some with a boundary a few characters off, some missed, some labelled
differently. What ``sync`` writes must equal the offline scoring of the
project's JSON export with the same options.
"""

import json

import pytest
from label_studio_sdk import LabelStudio

from plugin.cli import main
from plugin.labelstudio.localserver import sign_up
from plugin.mapping.labelconfig import parse_label_config
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState

CONFIG = """<View>
  <Labels name="ner" toName="text"><Label value="PER"/><Label value="LOC"/><Label value="ORG"/></Labels>
  <Text name="text" value="$text"/>
</View>"""
TEXTS = ("Angela Merkel met Emmanuel Macron in Berlin.", "The United Nations opened an office in Nairobi.",
         "Lionel Messi left Barcelona for Paris.")
# task index -> annotator index -> spans (start, end, label)
PLAN = {
    0: {0: [(0, 13, "PER"), (18, 33, "PER"), (37, 43, "LOC")],
        1: [(0, 13, "PER"), (27, 33, "PER"), (37, 43, "LOC")],  # "Macron" alone: a boundary 9 characters off
        2: [(0, 13, "PER"), (18, 33, "PER")]},  # Berlin missed
    1: {0: [(4, 18, "ORG"), (39, 46, "LOC")],
        1: [(0, 18, "ORG"), (39, 46, "LOC")],  # "The United Nations": 4 characters more
        2: [(4, 18, "ORG"), (39, 46, "ORG")]},  # Nairobi labelled ORG
    2: {0: [(0, 12, "PER"), (18, 27, "ORG"), (32, 37, "LOC")],
        1: [(0, 12, "PER"), (18, 27, "LOC"), (32, 37, "LOC")]},
}


def _results(text, spans):
    return [{"from_name": "ner", "to_name": "text", "type": "labels",
             "value": {"start": s, "end": e, "text": text[s:e], "labels": [label]}} for s, e, label in spans]


@pytest.fixture(scope="module")
def project(label_studio):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    created = admin.projects.create(title="span sync test", label_config=CONFIG)
    admin.projects.import_tasks(id=created.id, request=[{"data": {"text": text}} for text in TEXTS])
    tasks = sorted(t.id for t in admin.tasks.list(project=created.id, page_size=100))
    annotators = [sign_up(label_studio.url, f"spans{i}@example.com") for i in range(3)]
    for index, by_annotator in PLAN.items():
        for who, spans in by_annotator.items():
            client = LabelStudio(base_url=label_studio.url, api_key=annotators[who][1])
            client.annotations.create(id=tasks[index], result=_results(TEXTS[index], spans))
    return {"id": created.id, "tasks": tasks, "admin": admin}


def test_sync_writes_f1_and_gamma_equal_to_the_offline_scoring_of_the_export(capsys, label_studio, project,
                                                                              tmp_path):
    assert main(["sync", "--project", str(project["id"]), "--url", label_studio.url, "--api-key",
                 label_studio.token, "--json", "--quiet"]) == 0
    live = json.loads(capsys.readouterr().out)
    assert live["tasks_written"] == 3

    exported = project["admin"].projects.exports.as_json(project["id"])
    state = ProjectState.from_tasks(exported, parse_label_config(CONFIG), mapping=MappingOptions(),
                                    scoring=ScoringOptions())
    offline = state.blocks(updated_at="now")
    for index, task in enumerate(project["tasks"]):
        block = project["admin"].tasks.get(id=str(task)).meta["agreement"]
        ner = block["controls"]["ner"]
        expected = offline[task]["controls"]["ner"]
        assert {k: ner[k] for k in ("f1", "f1_overlap", "gamma")} == {k: expected[k] for k in
                                                                       ("f1", "f1_overlap", "gamma")}
        assert ner["gamma"] is not None and ner["flag_on"] == "f1_overlap"
        assert (block["flagged"], block["reasons"]) == (offline[task]["flagged"], offline[task]["reasons"])
    # worked out from PLAN: pairs (0,1), (0,2), (1,2) of task 0 match exactly 2 of 3 + 3, 2 of 3 + 2, 1 of 3 + 2
    first = project["admin"].tasks.get(id=str(project["tasks"][0])).meta["agreement"]["controls"]["ner"]
    assert first["f1"] == pytest.approx((4 / 6 + 4 / 5 + 2 / 5) / 3, abs=1e-6)
    # with overlap at 0.5, "Macron" [27, 33) against "Emmanuel Macron" [18, 33) (Jaccard 0.4) still misses
    assert first["f1_overlap"] == pytest.approx((4 / 6 + 4 / 5 + 2 / 5) / 3, abs=1e-6)
    second = project["admin"].tasks.get(id=str(project["tasks"][1])).meta["agreement"]["controls"]["ner"]
    # the 4 characters more keep the ORG match at Jaccard 14/18; Nairobi as ORG is a miss for the pairs with 2
    assert second["f1_overlap"] == pytest.approx((1.0 + 2 / 4 + 2 / 4) / 3, abs=1e-6)

    path = tmp_path / "export.json"
    path.write_text(json.dumps(exported))
    config = tmp_path / "config.xml"
    config.write_text(CONFIG)
    assert main(["sync", "--export", str(path), "--label-config", str(config), "--json", "--quiet"]) == 0
    spans = json.loads(capsys.readouterr().out)["controls"]["ner"]["spans"]
    assert live["controls"]["ner"]["spans"] == spans
    assert spans["lengths"] == "text" and spans["n_continua"] == 3 and spans["n_units"] == 20
