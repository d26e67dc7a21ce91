"""An in-memory Label Studio for the keeper's and the service's tests, with the project config they share."""

import copy
import threading
import time
from collections import Counter

from plugin.labelstudio.client import LabelStudioNotFound, Reachability
from plugin.mapping.labelconfig import parse_label_config

SECRET = "s3cret-Secret-s3cret"
CONFIG = """<View><Text name="text" value="$text"/>
<Choices name="sentiment" toName="text"><Choice value="pos"/><Choice value="neg"/><Choice value="neu"/></Choices>
<Choices name="topics" toName="text" choice="multiple"><Choice value="a"/><Choice value="b"/></Choices>
<Labels name="ner" toName="text"><Label value="PER"/><Label value="ORG"/></Labels>
<Rating name="quality" toName="text" maxRating="4"/>
<Number name="score" toName="text"/></View>"""
CONTROLS = parse_label_config(CONFIG)


class FakeLabelStudio:
    """In-memory stand-in for plugin.labelstudio.client.LabelStudioClient: the truth the service must converge to.

    ``fail`` maps a method name to a callable deciding, per call, whether it raises (and what). ``calls`` counts
    the calls of each method that stands for requests to Label Studio (``tasks``, a read of pages, counts one).
    """

    writers = 2
    step = 120
    """Seconds Label Studio's clock moves between two changes."""

    def __init__(self, tasks):
        self.clock = 0
        self.store = {}
        for task in tasks:
            self.store[task["id"]] = {"project": 1, **copy.deepcopy(task)}
            self._touch(task["id"])
        self.reads = []
        self.writes = []
        self.webhooks = []
        self.lock = threading.Lock()
        self.fail = {}
        self.reachability = Reachability()
        self.configs = {1: CONFIG}  # project -> label config: the projects Label Studio has
        self.calls = Counter()

    def _maybe_fail(self, name):
        rule = self.fail.get(name)
        error = rule() if rule else None
        if error is not None:
            self.reachability.failed(str(error))
            raise error
        self.reachability.ok()

    def label_config(self, project):
        self.calls["label_config"] += 1
        self._maybe_fail("label_config")
        if project not in self.configs:
            raise LabelStudioNotFound(f"404 Not Found: Project not found (error id {time.monotonic()})")
        return self.configs[project]

    def project_ids(self):
        self.calls["project_ids"] += 1
        self._maybe_fail("project_ids")
        return sorted(self.configs)

    def project_title(self, project):
        self.calls["project_title"] += 1
        return f"Reviews {project}"

    def project_exists(self, project):
        self.calls["project_exists"] += 1
        self._maybe_fail("project_ids")
        return project in self.configs

    def add_project(self, project, tasks):
        with self.lock:
            self.configs[project] = CONFIG
        for task in tasks:
            self.add_task(task, project)

    def add_task(self, task, project=1):
        with self.lock:
            self.store[task["id"]] = {"project": project, **copy.deepcopy(task)}
            self._touch(task["id"])

    def delete_project(self, project):
        with self.lock:
            del self.configs[project]
            self.store = {t: task for t, task in self.store.items() if task["project"] != project}
            self.webhooks = [h for h in self.webhooks if h["project"] != project]

    def _touch(self, task):
        """Label Studio moves a task's updated_at on every change (:attr:`step` apart)."""
        self.clock += self.step
        self.store[task]["updated_at"] = f"2026-01-01T{self.clock // 3600:02d}:{self.clock // 60 % 60:02d}:" \
                                               f"{self.clock % 60:02d}.000000Z"

    def tasks(self, project, on_total=None, max_rate=None, updated_after=None, stamps_only=False):
        self.calls["tasks"] += 1
        self._maybe_fail("tasks")
        with self.lock:
            found = [copy.deepcopy(t) if not stamps_only else {"id": t["id"], "updated_at": t["updated_at"]}
                     for t in self.store.values() if t["project"] == project
                     and (updated_after is None or t["updated_at"] > updated_after.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))]
            self.reads.append(("changed" if updated_after else "all", len(found)))
            if on_total is not None:  # as the client's first page tells it: the project's tasks, changed or not
                on_total(sum(t["project"] == project for t in self.store.values()))
            return found

    def requests_sent(self):
        """Requests made so far, as the client counts those its thread sent (the fake's tests read on one thread)."""
        return sum(self.calls.values())

    def task_count(self, project):
        self.calls["task_count"] += 1
        self._maybe_fail("tasks")
        with self.lock:
            return sum(t["project"] == project for t in self.store.values())

    def task(self, task):
        self.calls["task"] += 1
        self._maybe_fail("task")
        with self.lock:
            return copy.deepcopy(self.store.get(task))

    def tasks_by_id(self, project, ids):
        self.calls["tasks_by_id"] += 1
        self._maybe_fail("task")
        with self.lock:
            return [{"predictions": [], **copy.deepcopy(self.store[i])} for i in ids
                    if i in self.store and self.store[i]["project"] == project]

    def update_meta(self, task, meta, *, data=None, overlap=None):
        self.calls["update_meta"] += 1
        self._maybe_fail("update_meta")
        with self.lock:
            self.writes.append(task)
            if overlap is not None:
                self.store[task].update(overlap=overlap, is_labeled=False)
            self.store[task]["meta"] = copy.deepcopy(meta)
            if data is not None:
                self.store[task]["data"] = copy.deepcopy(data)
            self._touch(task)
            # Label Studio answers with the task as written, its annotations and predictions included
            return {"predictions": [], **copy.deepcopy(self.store[task])}

    def write_prediction(self, task, *, model_version, prediction, results, score, delete=()):
        self.calls["write_prediction"] += 1
        self._maybe_fail("write_prediction")
        with self.lock:
            held = self.store[task].setdefault("predictions", [])
            if results is not None:
                if prediction is None:
                    self.next_prediction = getattr(self, "next_prediction", 1000) + 1
                    held.append({"id": self.next_prediction, "model_version": model_version,
                                 "created_at": f"2026-01-02T00:00:{len(held):02d}Z"})
                    prediction = self.next_prediction
                found = next(p for p in held if p["id"] == prediction)
                found.update(result=copy.deepcopy(results), score=score, model_version=model_version)
            held[:] = [p for p in held if p["id"] not in delete]
            self.prediction_writes = getattr(self, "prediction_writes", 0) + 1

    def ensure_view(self, project, *, title, filters, ordering, hidden=(), numbers=()):
        self.calls["ensure_view"] += 1
        self._maybe_fail("ensure_webhook")
        self.views = {**getattr(self, "views", {}), (project, title): {"filters": filters, "ordering": ordering}}
        return 1

    def users(self):
        self.calls["users"] += 1
        self._maybe_fail("users")
        return {"1": "Ann <ann@example.com>", "2": "Bo <bo@example.com>", "3": "Cy <cy@example.com>"}

    def ensure_webhook(self, project, *, url, actions, headers, marker=None):
        self.calls["ensure_webhook"] += 1
        self._maybe_fail("ensure_webhook")
        self.webhooks = [h for h in self.webhooks if not (h["project"] == project and h["url"] != url
                                                          and marker in h["headers"])]
        existing = [h for h in self.webhooks if h["url"] == url and h["project"] == project]
        if existing:
            existing[0].update(actions=list(actions), headers=headers)
        else:
            self.webhooks.append({"url": url, "project": project, "actions": list(actions), "headers": headers})
        return 1

    def remove_webhooks(self, project, *, url, marker):
        self.calls["remove_webhooks"] += 1
        self._maybe_fail("remove_webhooks")
        kept = [h for h in self.webhooks if not (h["project"] == project and h["url"] == url
                                                 and marker in h["headers"])]
        removed, self.webhooks = len(self.webhooks) - len(kept), kept
        return removed

    # the truth changes as annotators work
    def annotate(self, task, annotation):
        with self.lock:
            found = self.store[task]["annotations"]
            found[:] = [a for a in found if a["id"] != annotation["id"]] + [annotation]
            self._touch(task)

    def delete_annotation(self, identifier):
        with self.lock:
            for task in self.store.values():
                if any(a["id"] == identifier for a in task["annotations"]):
                    task["annotations"] = [a for a in task["annotations"] if a["id"] != identifier]
                    self._touch(task["id"])

    def meta(self, task):
        with self.lock:
            return copy.deepcopy(self.store[task]["meta"])

    def payload(self, task, annotation_id, action="ANNOTATION_CREATED"):
        """The webhook Label Studio sends for an annotation saved: the annotation, the task's own fields, the project.

        As 1.23 sends it: the task without its annotations and predictions, with their counts.
        """
        with self.lock:
            held = self.store[task]
            annotations = held.get("annotations", [])
            fields = {key: copy.deepcopy(value) for key, value in held.items()
                      if key not in ("annotations", "predictions")}
            fields.update(total_annotations=sum(not a.get("was_cancelled") for a in annotations),
                          cancelled_annotations=sum(bool(a.get("was_cancelled")) for a in annotations),
                          total_predictions=len(held.get("predictions", [])))
            return {"action": action, "project": {"id": held["project"], "token": "project-token-never-kept"},
                    "annotation": copy.deepcopy(next(a for a in annotations if a["id"] == annotation_id)),
                    "task": fields}


def annotation(identifier, task, annotator, choice, second="00"):
    return {"id": identifier, "task": task, "completed_by": annotator, "was_cancelled": False,
            "updated_at": f"2026-01-01T00:00:{second}Z",
            "result": [{"from_name": "sentiment", "type": "choices", "value": {"choices": [choice]}}]}
