"""The review queue in a real Label Studio: the "Low agreement" tab sorts the mirrored score as a number, in the
queue's order (the lowest score, then the least certain consensus, then the fewest annotations), and a project
without a tab gets a "Default" tab of every task before it."""

import json

from label_studio_sdk import LabelStudio

from plugin.cli import main
from plugin.labelstudio.client import LabelStudioClient
from plugin.settings import Connection
from plugin.state.blocks import mirrored_score

from .conftest import text_project

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/><Choice value="neu"/></Choices>
</View>"""
# task index -> the label each annotator gave: ties at 0 (2 and 3 annotators), at 1/3, and tasks in agreement
PLAN = [("pos", "neg"), ("pos", "neg", "neu"), ("pos", "pos"), ("neg", "neu"), ("pos", "pos", "neg"),
        ("neu", "pos"), ("neg", "neg", "neu"), ("pos", "pos", "pos"), ("neu", "neg", "pos")]


def _result(label):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [label]}}]


def _listed(admin, project, view):
    return [task.id for task in admin.tasks.list(project=project, view=view, fields="all")]


def test_the_tab_lists_the_flagged_tasks_in_the_queue_s_order_after_a_default_tab_of_every_task(label_studio,
                                                                                                 capsys):
    admin, project, tasks, users = text_project(label_studio, title="review queue", config=CONFIG,
                                                n_tasks=len(PLAN), annotators=[f"queue{i}@example.com"
                                                                               for i in range(3)])
    for index, labels in enumerate(PLAN):
        for who, label in enumerate(labels):
            users[who].annotations.create(id=tasks[index], result=_result(label))
    assert not list(admin.views.list(project=project))  # nobody opened the project: no tab yet
    for _ in range(2):  # the second sync finds the tabs: no third tab, no second "Default"
        status = main(["sync", "--project", str(project), "--url", label_studio.url, "--api-key", label_studio.token,
                       "--mirror-to-data", "--json", "--quiet"])
        assert status == 0, capsys.readouterr()
        summary = json.loads(capsys.readouterr().out)
    views = sorted(admin.views.list(project=project), key=lambda view: view.id)
    assert [view.data["title"] for view in views] == ["Default", "Low agreement"]
    default, tab = views
    assert default.data["filters"] == {"conjunction": "and", "items": []}
    assert sorted(_listed(admin, project, default.id)) == tasks  # every task
    blocks = {task: admin.tasks.get(id=str(task)) for task in tasks}
    flagged = [t for t in tasks if blocks[t].meta["agreement"]["flagged"]]
    assert summary["flagged"] == len(flagged) == 7
    mirrored = {t: blocks[t].data["agreement_score"] for t in tasks}
    assert all(mirrored[t] == mirrored_score(blocks[t].meta["agreement"]) for t in tasks)
    assert all(round(mirrored[t], 3) == round(min(c["spa"] for c in blocks[t].meta["agreement"]["controls"]
                                                  .values()), 3) for t in tasks)  # read to 3 decimals: the score

    def queue(task):  # the lowest score, the least certain consensus, the fewest annotations
        block = blocks[task].meta["agreement"]
        sentiment = block["controls"]["sentiment"]
        return round(sentiment["spa"], 3), sentiment["consensus"]["posterior"], block["n_annotations"]

    listed = _listed(admin, project, tab.id)
    assert listed == sorted(flagged, key=lambda t: (queue(t), t))
    assert [mirrored[t] for t in listed] == sorted(mirrored[t] for t in flagged)
    assert len({queue(t)[0] for t in listed}) < len(listed)  # tied scores, each in its place
    assert tab.data["columnsDisplayType"] == {"tasks:data.agreement_score": "Number"}


def test_label_studio_sorts_a_number_in_task_data_as_a_number_and_a_text_as_text(label_studio):
    # what the mirrored score relies on: written as a JSON number, under a tab that says the column holds numbers
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="numeric order", label_config=CONFIG).id
    values = [0.5, 0.00005002, 0.10000002, 1e-08, 0.25, -0.5, -0.25, 1.0]
    admin.projects.import_tasks(id=project, request=[{"data": {"text": f"v{i}", "score": value, "shown": str(value)}}
                                                     for i, value in enumerate(values)])
    client = LabelStudioClient(Connection(url=label_studio.url, api_key=label_studio.token))
    every = {"conjunction": "and", "items": []}
    numbers = client.ensure_view(project, title="by score", filters=every, ordering=["tasks:data.score"],
                                 numbers=["tasks:data.score"])
    texts = client.ensure_view(project, title="by text", filters=every, ordering=["tasks:data.shown"])
    by_id = {task.id: task.data for task in admin.tasks.list(project=project, fields="all")}
    assert [by_id[t]["score"] for t in _listed(admin, project, numbers)] == sorted(values)
    assert [by_id[t]["shown"] for t in _listed(admin, project, texts)] == sorted(str(v) for v in values)
    assert sorted(values) != sorted(values, key=str)  # the two orders differ: each test above can fail
    assert [v.data["title"] for v in sorted(admin.views.list(project=project), key=lambda v: v.id)] == [
        "Default", "by score", "by text"]
