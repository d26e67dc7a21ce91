"""``ls-agreement sync`` against a real Label Studio with annotators who signed up."""

import json
import re

import krippendorff
import numpy as np
import pytest
from label_studio_sdk import LabelStudio

from agreement import item_agreement, spa
from plugin.cli import main
from plugin.labelstudio.localserver import personal_access_token, sign_up
from plugin.state.flags import control_value

CONFIG = """<View>
  <Text name="text" value="$text"/>
  <Choices name="sentiment" toName="text" choice="single">
    <Choice value="positive"/><Choice value="negative"/><Choice value="neutral"/>
  </Choices>
  <Labels name="ner" toName="text"><Label value="PER"/><Label value="ORG"/></Labels>
  <Rating name="quality" toName="text" maxRating="5"/>
</View>"""
SENTIMENTS = ("positive", "negative", "neutral")

# Who labels what: task index -> annotator index -> sentiment (None: that annotator skipped the task).
PLAN = {
    0: {0: "positive", 1: "positive", 2: "positive"},
    1: {0: "positive", 1: "negative", 2: "negative"},
    2: {0: "neutral", 1: "neutral"},
    3: {1: "negative", 2: "positive"},
    4: {0: "negative", 2: None},
    5: {0: "positive", 1: "neutral", 2: "negative"},
}


def results(sentiment, who):
    return [
        {"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [sentiment]}},
        {"from_name": "ner", "to_name": "text", "type": "labels",
         "value": {"start": 0, "end": 5, "text": "Alice", "labels": ["PER" if who < 2 else "ORG"]}},
        {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": 3 + who % 2}},
    ]


@pytest.fixture(scope="module")
def project(label_studio):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    created = admin.projects.create(title="sync test", label_config=CONFIG)
    admin.projects.import_tasks(id=created.id, request=[
        {"data": {"text": f"Alice wrote note {i}."}, "meta": {"source": "import", "batch": i}} for i in range(7)])
    tasks = sorted(t.id for t in admin.tasks.list(project=created.id, page_size=100))
    annotators = [sign_up(label_studio.url, f"annotator{i}@example.com") for i in range(3)]
    for index, by_annotator in PLAN.items():
        for who, sentiment in by_annotator.items():
            client = LabelStudio(base_url=label_studio.url, api_key=annotators[who][1])
            if sentiment is None:
                client.annotations.create(id=tasks[index], result=[], was_cancelled=True)
            else:
                client.annotations.create(id=tasks[index], result=results(sentiment, who))
    return {"id": created.id, "tasks": tasks, "annotators": annotators, "admin": admin}


def sync(capsys, label_studio, project, *extra, api_key=None):
    status = main(["sync", "--project", str(project["id"]), "--url", label_studio.url,
                   "--api-key", api_key or label_studio.token, "--json", "--quiet", *extra])
    out = capsys.readouterr().out
    assert status == 0, out
    return json.loads(out)


def expected_counts():
    """The sentiment count matrix of PLAN, computed without the plugin."""
    counts = np.zeros((len(PLAN), 3))
    for index, by_annotator in PLAN.items():
        for sentiment in by_annotator.values():
            if sentiment is not None:
                counts[index, SENTIMENTS.index(sentiment)] += 1
    return counts


def test_sync_writes_scores_equal_to_the_core_and_keeps_other_meta(capsys, label_studio, project):
    summary = sync(capsys, label_studio, project)
    counts = expected_counts()
    assert summary["n_tasks"] == 7 and summary["n_annotators"] == 3
    assert summary["skipped"] == {"skipped (cancelled) annotation": 1}
    assert summary["controls"]["sentiment"]["spa"] == pytest.approx(spa(counts), abs=1e-6)
    reliability = [[np.nan if who not in PLAN[i] or PLAN[i][who] is None else SENTIMENTS.index(PLAN[i][who])
                    for i in range(len(PLAN))] for who in range(3)]
    assert summary["controls"]["sentiment"]["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal"), abs=1e-6)
    # Task 4 has one counted annotation (the other was skipped) and task 6 none: five tasks are pairable.
    assert summary["tasks_written"] == 6

    per_item = item_agreement(counts)
    admin = project["admin"]
    for index, task_id in enumerate(project["tasks"]):
        meta = admin.tasks.get(id=str(task_id)).meta
        assert meta["source"] == "import" and meta["batch"] == index
        if index == 6:
            assert "agreement" not in meta
            continue
        block = meta["agreement"]
        assert block["n_annotations"] == sum(s is not None for s in PLAN[index].values())
        if np.isnan(per_item[index]):
            assert block["controls"]["sentiment"]["spa"] is None and block["spa"] is None
        else:
            assert block["controls"]["sentiment"]["spa"] == pytest.approx(per_item[index], abs=1e-6)
        lowest = [control_value(c) for c in block["controls"].values()]  # ner: its overlap F1
        assert block["flagged"] == (block["n_annotations"] >= 2 and any(v is not None and v < 0.5 for v in lowest))
        assert set(block) >= {"spa", "alpha", "n_annotations", "flagged", "reasons", "controls", "updated_at",
                              "version"}


def test_a_second_sync_writes_nothing_and_an_edit_writes_what_changed(capsys, label_studio, project):
    admin = project["admin"]
    assert sync(capsys, label_studio, project)["tasks_written"] == 0
    before = {t: admin.tasks.get(id=str(t)).meta for t in project["tasks"]}
    task = project["tasks"][2]
    annotation = next(a for a in admin.annotations.list(id=task))
    admin.annotations.update(id=annotation.id, result=results("positive", 0))
    summary = sync(capsys, label_studio, project)
    after = {t: admin.tasks.get(id=str(t)).meta for t in project["tasks"]}
    changed = [t for t in project["tasks"] if before[t] != after[t]]
    assert task in changed and summary["tasks_written"] == len(changed)
    assert after[task]["agreement"]["controls"]["sentiment"]["spa"] == 0.0 and after[task]["agreement"]["flagged"]
    for other in set(changed) - {task}:
        # another task is rewritten only where what a reviewer acts on moved: here its consensus label, as the edit
        # moved the annotators' estimated confusion (alpha and posteriors drifting alone write nothing)
        old, new = before[other]["agreement"], after[other]["agreement"]
        moved = [name for name, control in new["controls"].items()
                 if control["consensus"]["label"] != old["controls"][name]["consensus"]["label"]]
        assert old["spa"] == new["spa"] and moved, f"task {other} was rewritten, yet no consensus label moved"
    assert after[task]["source"] == "import"
    assert sync(capsys, label_studio, project)["tasks_written"] == 0


def test_a_personal_access_token_works_too(capsys, label_studio, project):
    token = personal_access_token(label_studio.url)
    assert token.count(".") == 2  # a JWT
    summary = sync(capsys, label_studio, project, "--dry-run", api_key=token)
    assert summary["dry_run"] and summary["tasks_to_write"] == 0 and summary["n_tasks"] == 7


def test_a_wrong_key_is_one_line(capsys, label_studio, project):
    status = main(["sync", "--project", str(project["id"]), "--url", label_studio.url, "--api-key", "f" * 40])
    err = capsys.readouterr().err
    assert status == 2 and "refused the API key (401)" in err and err.count("\n") == 1
    # the request Label Studio refused, never the key
    assert re.search(r"\(401\) on GET /api/[a-z/0-9]+: ", err) and "f" * 40 not in err


def test_the_low_agreement_tab_lists_the_flagged_tasks_worst_first(capsys, label_studio, project):
    admin = project["admin"]
    before = {t: admin.tasks.get(id=str(t)).data for t in project["tasks"]}
    for _ in range(2):  # idempotent: one tab however often sync runs
        summary = sync(capsys, label_studio, project, "--mirror-to-data")
    tabs = [v for v in admin.views.list(project=project["id"]) if (v.data or {}).get("title") == "Low agreement"]
    assert len(tabs) == 1
    flagged = {t for t in project["tasks"] if admin.tasks.get(id=str(t)).meta.get("agreement", {}).get("flagged")}
    assert summary["flagged"] == len(flagged) > 0
    listed = [t.id for t in admin.tasks.list(project=project["id"], view=tabs[0].id, fields="all")]
    assert set(listed) == flagged
    scores = [admin.tasks.get(id=str(t)).data["agreement_score"] for t in listed]
    assert scores == sorted(scores)  # worst first
    for task in project["tasks"]:  # every other data key intact
        data = admin.tasks.get(id=str(task)).data
        assert data["text"] == before[task]["text"]
    assert sync(capsys, label_studio, project, "--mirror-to-data")["tasks_written"] == 0
    # Who disagrees, by name and email from Label Studio's users.
    annotators = summary["controls"]["sentiment"]["annotators"]
    assert sorted(row["name"] for row in annotators) == [f"annotator{i}@example.com" for i in range(3)]
    assert all(row["n_items"] >= 2 for row in annotators)


def test_the_report_of_a_live_project_equals_the_sync_and_links_to_its_tasks(capsys, label_studio, project,
                                                                              tmp_path):
    summary = sync(capsys, label_studio, project, "--dry-run")
    out = tmp_path / "report.json"
    assert main(["report", "--project", str(project["id"]), "--url", label_studio.url, "--api-key",
                 label_studio.token, "--format", "json", "--out", str(out), "--quiet"]) == 0
    assert "Wrote the report of 7 tasks" in capsys.readouterr().out
    report = json.loads(out.read_text())
    headline = {row["control"]: row for row in report["headline"]}
    for name, control in summary["controls"].items():
        assert headline[name]["spa"] == control["spa"] and headline[name]["alpha"] == control["alpha"]
    assert report["meta"]["flagged"] == summary["flagged"]
    flagged = [row for row in report["tasks"] if row["flagged"]]
    assert {row["task"] for row in flagged} <= set(project["tasks"])
    assert flagged[0]["link"] == f"{label_studio.url}/projects/{project['id']}/data?task={flagged[0]['task']}"
    names = {row["name"] for row in report["annotators"]}
    assert names == {f"annotator{i}@example.com" for i in range(3)}
    # The sentiment timeline ends where the headline is, one point per share of the annotations by created_at.
    timeline = [row for row in report["timeline"] if row["control"] == "sentiment"]
    assert timeline[-1]["n_labels"] == headline["sentiment"]["n_labels"]
    assert timeline[-1]["spa"] == pytest.approx(headline["sentiment"]["spa"], abs=1e-6)


@pytest.mark.slow  # and headless Chromium
def test_the_tab_in_label_studio_shows_the_flagged_tasks_worst_first_with_their_score(capsys, label_studio,
                                                                                    project, tmp_path):
    from plugin.labelstudio.localserver import ADMIN_EMAIL, ADMIN_PASSWORD
    from tests.browser import browser_page, ink

    sync(capsys, label_studio, project, "--mirror-to-data")
    admin = project["admin"]
    tab = next(v for v in admin.views.list(project=project["id"]) if (v.data or {}).get("title") == "Low agreement")
    scores = {t: admin.tasks.get(id=str(t)).data.get("agreement_score") for t in project["tasks"]}
    flagged = [t for t in project["tasks"] if admin.tasks.get(id=str(t)).meta.get("agreement", {}).get("flagged")]
    with browser_page(width=1400, height=700) as page:
        page.goto(f"{label_studio.url}/user/login/")
        page.fill("input[name=email]", ADMIN_EMAIL)
        page.fill("input[name=password]", ADMIN_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")
        page.goto(f"{label_studio.url}/projects/{project['id']}/data?tab={tab.id}")
        page.locator(".lsf-table-row").first.wait_for(timeout=60_000)
        page.wait_for_load_state("networkidle")
        columns = page.locator(".lsf-th[data-id]").evaluate_all("cells => cells.map(c => c.dataset.id)")
        rows = page.locator(".lsf-table-row").evaluate_all(
            "rows => rows.map(r => Array.from(r.querySelectorAll('.lsf-table__cell')).map(c => c.innerText.trim()))")
        shot = tmp_path / "tab.png"
        page.screenshot(path=str(shot))
    assert "tasks:data.agreement_score" in columns and "tasks:id" in columns
    id_at, score_at = columns.index("tasks:id"), columns.index("tasks:data.agreement_score")
    offset = 1  # each row starts with its checkbox cell, which has no heading
    assert all(row[0] == "" for row in rows)
    shown = [int(row[id_at + offset]) for row in rows]
    assert sorted(shown) == sorted(flagged)
    # the grid shows the number to 3 decimals, the score (what follows orders ties: plugin.state.flags.review_keys)
    assert [float(row[score_at + offset]) for row in rows] == [round(scores[t], 3) for t in shown]
    assert [scores[t] for t in shown] == sorted(scores[t] for t in flagged)  # worst first
    assert ink(shot) > 0.02


def test_escalation_makes_label_studio_serve_a_flagged_task_to_one_more_annotator(capsys, label_studio, project):
    import requests

    admin = project["admin"]
    config = """<View><Text name="text" value="$text"/><Choices name="sentiment" toName="text">
      <Choice value="positive"/><Choice value="negative"/><Choice value="neutral"/></Choices></View>"""
    created = admin.projects.create(title="escalation test", label_config=config, maximum_annotations=2)
    admin.projects.import_tasks(id=created.id, request=[{"data": {"text": "A review."}}])
    (task,) = [t.id for t in admin.tasks.list(project=created.id, page_size=10)]
    first, second, third = project["annotators"]

    def submit(annotator, sentiment):
        LabelStudio(base_url=label_studio.url, api_key=annotator[1]).annotations.create(id=task, result=[
            {"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [sentiment]}}])

    def served_to(annotator):
        answer = requests.get(f"{label_studio.url}/api/projects/{created.id}/next",
                              headers={"Authorization": f"Token {annotator[1]}"}, timeout=30)
        return answer.json().get("id") if answer.status_code == 200 else None

    submit(first, "positive")
    submit(second, "negative")
    before = admin.tasks.get(id=str(task))
    assert (before.overlap, before.is_labeled) == (2, True)
    assert served_to(third) is None  # labeled: Label Studio's queue has nothing for the third annotator
    options = ["--url", label_studio.url, "--api-key", label_studio.token, "--json", "--quiet", "--escalate"]
    main(["sync", "--project", str(created.id), *options])
    summary = json.loads(capsys.readouterr().out)
    assert summary["flagged"] == 1 and summary["tasks_escalated"] == 1
    after = admin.tasks.get(id=str(task))
    assert (after.overlap, after.is_labeled) == (3, False)
    assert after.meta["agreement"]["flagged"]
    assert served_to(third) == task  # served to an annotator who has not labeled it
    submit(third, "neutral")
    done = admin.tasks.get(id=str(task))
    assert (done.overlap, done.is_labeled) == (3, True)  # complete again once the third annotation is in
    # Still flagged: one more, up to the cap; at the cap nothing changes.
    main(["sync", "--project", str(created.id), *options, "--max-overlap", "3"])
    assert json.loads(capsys.readouterr().out)["tasks_escalated"] == 0
    assert admin.tasks.get(id=str(task)).overlap == 3
