"""A changed-only read against a real Label Studio: newest first, stopping at the first task not newer, no time sent."""

import time
from datetime import timedelta

from label_studio_sdk import LabelStudio

from plugin.clock import parse_time
from plugin.labelstudio import LabelStudioClient
from plugin.settings import Connection

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices></View>"""


def result(label):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [label]}}]


def test_a_changed_only_read_gets_exactly_the_tasks_changed_since(label_studio):
    admin = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    project = admin.projects.create(title="changed reads", label_config=CONFIG).id
    admin.projects.import_tasks(id=project, request=[{"data": {"text": f"t{i}"}} for i in range(23)])
    tasks = sorted(t.id for t in admin.tasks.list(project=project, page_size=100))
    client = LabelStudioClient(Connection(url=label_studio.url, api_key=label_studio.token, page_size=4))
    everything = list(client.tasks(project))
    assert sorted(t["id"] for t in everything) == tasks
    newest = max(parse_time(t["updated_at"]) for t in everything)
    time.sleep(1.1)
    changed = [tasks[2], tasks[11], tasks[20]]  # on different pages of four
    for task in changed:
        admin.annotations.create(id=task, result=result("pos"))
    admin.predictions.create(task=tasks[7], result=result("neg"), model_version="v1")  # moves updated_at too
    read = list(client.tasks(project, updated_after=newest))
    assert sorted(t["id"] for t in read) == sorted([*changed, tasks[7]])
    assert [parse_time(t["updated_at"]) for t in read] == sorted((parse_time(t["updated_at"]) for t in read),
                                                                 reverse=True)
    assert list(client.tasks(project, updated_after=max(parse_time(t["updated_at"]) for t in read))) == []
    margin = list(client.tasks(project, updated_after=newest - timedelta(days=1)))
    assert len(margin) == len(tasks)
    # Label Studio parses the Data Manager's updated_at filter as a naive datetime and warns on every such read;
    # this read sends no time at all.
    log = (label_studio.data_dir / "label-studio.log").read_text(errors="replace")
    assert "received a naive datetime" not in log
