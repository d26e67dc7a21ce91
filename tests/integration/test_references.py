"""References against a real Label Studio: an imported ground truth, one marked by a reviewer, and predictions of
two model versions created through the API; ``sync``, ``serve`` and ``report`` agree with the export read offline.

Measured here on Label Studio 1.23.2: creating a prediction moves its task's ``updated_at``, so a changed-only
pass reads it (predictions send no webhook).
"""

import json

import pytest
import requests
from label_studio_sdk import LabelStudio

from plugin.cli import main
from plugin.labelstudio.localserver import free_port, sign_up

from .test_serve import start_service, status_of, stop, wait_for

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/><Choice value="neu"/></Choices>
</View>"""

# task index -> annotator index -> label
PLAN = {0: {0: "pos", 1: "pos", 2: "neg"}, 1: {0: "neg", 1: "neg"}, 2: {0: "neu", 1: "pos", 2: "neu"},
        3: {0: "pos", 1: "neg", 2: "pos"}, 4: {1: "neg", 2: "neg"}, 5: {0: "pos", 2: "neu"}}
IMPORTED_TRUTH = {0: "pos", 1: "neu"}
V1 = {0: "pos", 1: "neg", 2: "neu", 3: "pos", 4: "neg", 5: "neu"}
V2 = {3: "neg", 4: "neg", 5: "pos"}


def result(label):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [label]}}]


@pytest.fixture(scope="module")
def project(label_studio):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    created = admin.projects.create(title="references", label_config=CONFIG)
    admin.projects.import_tasks(id=created.id, request=[
        {"data": {"text": f"note {i}"}, **({"annotations": [{"result": result(IMPORTED_TRUTH[i])}]}
                                           if i in IMPORTED_TRUTH else {})} for i in range(6)])
    tasks = sorted(t.id for t in admin.tasks.list(project=created.id, page_size=100))
    annotators = [sign_up(label_studio.url, f"ref{i}@example.com") for i in range(3)]
    annotations = {}
    for index, by_annotator in PLAN.items():
        for who, label in by_annotator.items():
            client = LabelStudio(base_url=label_studio.url, api_key=annotators[who][1])
            annotations[(index, who)] = client.annotations.create(id=tasks[index], result=result(label)).id
    admin.annotations.update(id=annotations[(2, 0)], ground_truth=True)  # a reviewer marks annotator 0's
    for index, label in V1.items():
        admin.predictions.create(task=tasks[index], result=result(label), model_version="v1")
    for index, label in V2.items():
        admin.predictions.create(task=tasks[index], result=result(label), model_version="v2")
    return {"id": created.id, "tasks": tasks, "annotators": annotators, "admin": admin}


def run(capsys, *args):
    status = main([*args, "--quiet"])
    out = capsys.readouterr().out
    assert status == 0, out
    return out


def export(label_studio, project, tmp_path):
    """A JSON export snapshot with the predictions and the annotators' user objects (the quick export, like the
    Data Manager's, gives predictions by id only: they are counted as skipped, see the last test)."""
    headers = {"Authorization": f"Token {label_studio.token}"}
    base = f"{label_studio.url}/api/projects/{project['id']}/exports"
    created = requests.post(f"{base}/", headers=headers, timeout=30, json={"serialization_options": {
        "predictions": {"only_id": False}, "annotations__completed_by": {"only_id": False}}}).json()
    wait_for(lambda: requests.get(f"{base}/{created['id']}", headers=headers, timeout=10).json()["status"]
             == "completed", timeout=60)
    path = tmp_path / "export.json"
    path.write_bytes(requests.get(f"{base}/{created['id']}/download", params={"exportType": "JSON"},
                                  headers=headers, timeout=30).content)
    config = tmp_path / "config.xml"
    config.write_text(CONFIG)
    return path, config


def test_sync_scores_the_references_as_the_export_read_offline(capsys, label_studio, project, tmp_path):
    live = json.loads(run(capsys, "sync", "--project", str(project["id"]), "--url", label_studio.url,
                          "--api-key", label_studio.token, "--json", "--min-gt-accuracy", "0.6",
                          "--min-gt-items", "2"))
    path, config = export(label_studio, project, tmp_path)
    offline = json.loads(run(capsys, "sync", "--export", str(path), "--label-config", str(config), "--json",
                             "--min-gt-accuracy", "0.6", "--min-gt-items", "2"))
    references = live["controls"]["sentiment"]["references"]
    assert references == offline["controls"]["sentiment"]["references"]
    ids = {str(user): who for who, (user, _) in enumerate(project["annotators"])}
    truth = {ids[row["annotator"]]: row for row in references["ground_truth"]["annotators"]}
    # Imported truths on tasks 0 (pos) and 1 (neu); task 2's is annotator 0's neu, the reference for 1 and 2 only.
    # Annotator 0: pos, neg -> 1 of 2. Annotator 1: pos, neg, pos -> 1 of 3. Annotator 2: neg, neu -> 1 of 2.
    assert {who: (row["n_items"], row["accuracy"]) for who, row in truth.items()} == {
        0: (2, 0.5), 1: (3, pytest.approx(1 / 3)), 2: (2, 0.5)}
    assert truth[0]["name"] == "ref0@example.com"
    assert sorted(ids[a] for a in references["ground_truth"]["below"]) == [0, 1, 2]
    v1 = {ids[row["annotator"]]: row for row in references["models"]["v1"]["annotators"]}
    # v1 against annotator 0 on tasks 0, 1, 2, 3, 5: pos=pos, neg=neg, neu=neu, pos=pos, pos/neu -> 4 of 5.
    assert (v1[0]["n_items"], v1[0]["accuracy"]) == (5, 0.8)
    assert references["models"]["v2"]["n_tasks"] == 3
    admin, tasks = project["admin"], project["tasks"]
    blocks = {i: admin.tasks.get(id=str(t)).meta["agreement"]["controls"]["sentiment"] for i, t in enumerate(tasks)}
    assert blocks[0]["ground_truth"] == pytest.approx(2 / 3) and blocks[2]["ground_truth"] == 0.5
    assert "ground_truth" not in blocks[3]
    assert blocks[1]["prediction"] == 1.0  # v1 only: neg, as both annotators
    assert blocks[5]["prediction"] == 0.5  # v2, the latest there: pos, against pos and neu
    summary = run(capsys, "sync", "--project", str(project["id"]), "--url", label_studio.url, "--api-key",
                  label_studio.token, "--dry-run")
    assert "sentiment: against the ground truth on 3 tasks" in summary and "model v1 on 6 tasks" in summary


def test_the_report_agrees_with_the_export_read_offline(capsys, label_studio, project, tmp_path):
    path, config = export(label_studio, project, tmp_path)
    run(capsys, "report", "--project", str(project["id"]), "--url", label_studio.url, "--api-key",
        label_studio.token, "--format", "json", "--out", str(tmp_path / "live.json"))
    run(capsys, "report", "--export", str(path), "--label-config", str(config), "--format", "json", "--out",
        str(tmp_path / "offline.json"))
    live, offline = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("live", "offline"))
    for table in ("references", "models", "model_confusion"):
        assert live[table] == offline[table] and live[table], table


def test_a_quick_export_counts_its_predictions_as_skipped(capsys, project, tmp_path):
    chunks = project["admin"].projects.exports.download_sync(project["id"], export_type="JSON",
                                                              download_all_tasks=True)
    (tmp_path / "quick.json").write_bytes(b"".join(chunks))
    (tmp_path / "config.xml").write_text(CONFIG)
    summary = json.loads(run(capsys, "sync", "--export", str(tmp_path / "quick.json"), "--label-config",
                             str(tmp_path / "config.xml"), "--json"))
    assert summary["skipped"]["prediction given by its id only (Label Studio's quick JSON export; export a "
                              "snapshot with predictions included to score model versions)"] == 9
    assert "models" not in summary["controls"]["sentiment"]["references"]


def test_serve_picks_up_a_prediction_created_while_it_runs(label_studio, project, tmp_path):
    admin, tasks = project["admin"], project["tasks"]
    with open(tmp_path / "service.log", "wb") as log:
        process, url = start_service(label_studio.url, label_studio.token, project["id"], free_port(), log,
                                     "--reconcile-interval", "2")
        try:
            assert "sentiment" in status_of(url, project["id"])["references"]
            admin.predictions.create(task=tasks[1], result=result("neu"), model_version="v3")
            block = wait_for(lambda: (m := admin.tasks.get(id=str(tasks[1])).meta["agreement"]["controls"]
                                      ["sentiment"]).get("prediction") == 0.0 and m, timeout=30)
            assert block["ground_truth"] == 0.0  # the imported neu against neg, neg
            models = wait_for(lambda: status_of(url, project["id"])["references"]["sentiment"]["models"].get("v3"),
                              timeout=30)
            assert models["n_tasks"] == 1
        finally:
            stop(process)


def test_a_tab_lists_the_tasks_of_the_annotators_below_the_ground_truth(capsys, label_studio, project):
    summary = json.loads(run(capsys, "sync", "--project", str(project["id"]), "--url", label_studio.url,
                             "--api-key", label_studio.token, "--json", "--min-gt-accuracy", "0.45",
                             "--min-gt-items", "2"))
    ids = {str(user): who for who, (user, _) in enumerate(project["annotators"])}
    assert [ids[a] for a in summary["controls"]["sentiment"]["references"]["ground_truth"]["below"]] == [1]
    admin, tasks = project["admin"], project["tasks"]
    views = [v for v in admin.views.list(project=project["id"]) if v.data.get("title") == "Below ground truth"]
    assert len(views) == 1
    listed = sorted(t.id for t in admin.tasks.list(project=project["id"], view=views[0].id))
    assert listed == [tasks[i] for i in sorted(i for i, plan in PLAN.items() if 1 in plan)]
    run(capsys, "sync", "--project", str(project["id"]), "--url", label_studio.url, "--api-key",
        label_studio.token, "--min-gt-accuracy", "0.2")  # nobody below now: the same tab, empty
    views = [v for v in admin.views.list(project=project["id"]) if v.data.get("title") == "Below ground truth"]
    assert len(views) == 1 and not list(admin.tasks.list(project=project["id"], view=views[0].id))
