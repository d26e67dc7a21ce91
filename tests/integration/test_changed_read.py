"""Reads of changed tasks and the passes on them against a real Label Studio: newest first, stopping at the first
task not newer, no time sent; a pass decides again exactly when what Label Studio holds changed."""

import time
from datetime import timedelta

from plugin.clock import parse_time
from plugin.keeper.monitor import ProjectMonitor
from plugin.keeper.passes import full_pass, refresh_tasks
from plugin.labelstudio.client import LabelStudioClient
from plugin.settings import Connection, MappingOptions, ScoringOptions

from .conftest import text_project

CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/></Choices></View>"""


def result(label):
    return [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": [label]}}]


def test_a_changed_only_read_gets_exactly_the_tasks_changed_since(label_studio):
    admin, project, tasks, _ = text_project(label_studio, title="changed reads", config=CONFIG, n_tasks=23)
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


def test_passes_find_what_label_studio_holds_whether_or_not_anything_changed_since_the_last(label_studio):
    # A pass on a project nobody touched gives its last answer again without scoring; whatever changes in Label
    # Studio (blocks written, a meta edited by hand, an annotation deleted) is read by the next pass of changed tasks
    # and decided again. Each answer equals a full read's.
    admin, project, tasks, annotators = text_project(label_studio, title="passes", config=CONFIG, n_tasks=6,
                                                     annotators=["passes0@example.com", "passes1@example.com"])
    annotations = {task: [who.annotations.create(id=task, result=result(label)).id
                          for who, label in zip(annotators, ("pos", "neg" if task % 2 else "pos"), strict=True)]
                   for task in tasks}
    client = LabelStudioClient(Connection(url=label_studio.url, api_key=label_studio.token, page_size=4))
    options = {"mapping": MappingOptions(), "scoring": ScoringOptions(n_resamples=20)}

    def full_read() -> list[int]:
        return full_pass(client, ProjectMonitor(project, **options)).stale

    monitor = ProjectMonitor(project, **options)
    assert full_pass(client, monitor).stale == tasks  # nothing written yet
    assert full_pass(client, monitor, incremental=True).stale == tasks  # nothing changed: the same answer
    outcomes = refresh_tasks(client, monitor, tasks)
    assert set(outcomes.values()) == {"written"}
    time.sleep(1.1)  # Label Studio's updated_at moves by whole seconds
    assert full_pass(client, monitor, incremental=True).stale == [] == full_read()
    assert full_pass(client, monitor, incremental=True).stale == []
    admin.tasks.update(id=tasks[3], meta={"agreement": "edited by hand"})
    time.sleep(1.1)
    assert full_pass(client, monitor, incremental=True).stale == [tasks[3]] == full_read()
    refresh_tasks(client, monitor, [tasks[3]])
    admin.annotations.delete(id=annotations[tasks[1]][1])  # one annotator left: no pair to agree
    time.sleep(1.1)
    stale = full_pass(client, monitor, incremental=True).stale
    assert tasks[1] in stale and stale == full_read()
    assert full_pass(client, monitor, incremental=True).stale == stale
