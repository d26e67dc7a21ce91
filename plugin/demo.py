"""``ls-agreement demo``: the whole thing on a local Label Studio, in a few minutes.

Starts Label Studio (SQLite, loopback, data under ``var/demo``), creates a demo
project (single choice, multiple choices, NER spans, a rating) with a few
hundred tasks, starts ``ls-agreement serve`` on it, and simulates annotators
of different reliability who submit incompletely and over time through the
API, while the terminal shows SPA and alpha converging with their intervals.
It ends by printing the project's scores, where to see each task's scores in
Label Studio, the login, and how to stop. Ctrl-C stops every process it
started. A second run reuses the data dir and replaces the demo project.
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO, cast

import requests
from label_studio_sdk import LabelStudio

from plugin.keeper.passes import READ_AGAIN
from plugin.labelstudio import localserver
from plugin.labelstudio.client import LabelStudioClient, LabelStudioError
from plugin.settings import Connection, MappingOptions, ScoringOptions, SettingsError
from plugin.summary import reference_lines

__all__ = ["CONFIG", "DemoSettings", "run_demo", "simulated_export"]

TITLE = "Agreement demo"
CONFIG = """<View>
  <Header value="Read the review, then label it"/>
  <Text name="text" value="$text"/>
  <Choices name="sentiment" toName="text" choice="single" showInline="true">
    <Choice value="positive"/><Choice value="negative"/><Choice value="neutral"/>
  </Choices>
  <Choices name="topics" toName="text" choice="multiple" showInline="true">
    <Choice value="price"/><Choice value="service"/><Choice value="quality"/><Choice value="delivery"/>
  </Choices>
  <Labels name="entities" toName="text"><Label value="PER"/><Label value="ORG"/></Labels>
  <Rating name="helpfulness" toName="text" maxRating="5"/>
</View>"""
PEOPLE = ("Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana")
ORGS = ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay")
TOPICS = ("price", "service", "quality", "delivery")
SENTIMENTS = ("positive", "negative", "neutral")
WORDING = {"positive": "loved", "negative": "was let down by", "neutral": "had an ordinary time with"}
RELIABILITY = (0.95, 0.85, 0.75, 0.6, 0.4)
MODELS = (("sim-model-v1", 0.7), ("sim-model-v2", 0.9))
"""The simulated model versions that pre-annotate every task, and how often each is right."""
GROUND_TRUTH_SHARE = 0.1
"""The share of the demo's tasks imported with a known answer (at most 30)."""
MIN_GT_ACCURACY = 0.7


@dataclass(frozen=True)
class DemoSettings:
    """What the demo was asked, read once at the entry point."""

    data_dir: Path
    label_studio: str | None = None
    port: int = 8080
    service_port: int = 9090
    tasks: int = 300
    annotators: int = 5
    per_task: tuple[int, int] = (2, 3)
    pace: float = 1.5
    wait: bool = True
    seed: int = 0
    reconcile_interval: float = 20.0

    def __post_init__(self) -> None:
        if self.tasks < 1 or not 2 <= self.annotators <= 5 or self.reconcile_interval < 1:
            raise SettingsError("--tasks must be positive, --annotators between 2 and 5, and --reconcile-interval at "
                             "least 1.")


@dataclass(frozen=True)
class Truth:
    """The hidden truth of one demo task, from which annotators err."""

    text: str
    person: tuple[int, int]
    org: tuple[int, int]
    sentiment: str
    topics: tuple[str, ...]
    helpfulness: int


def make_truths(n: int, rnd: random.Random) -> list[Truth]:
    truths = []
    for _ in range(n):
        person, org, sentiment = rnd.choice(PEOPLE), rnd.choice(ORGS), rnd.choice(SENTIMENTS)
        topics = tuple(rnd.sample(TOPICS, rnd.choice((1, 1, 2))))
        text = f"{person} {WORDING[sentiment]} {org}: the {' and the '.join(topics)} stood out."
        start = len(person) + len(WORDING[sentiment]) + 2
        truths.append(Truth(text, (0, len(person)), (start, start + len(org)), sentiment, topics,
                            rnd.randint(2, 5)))
    return truths


def annotate(truth: Truth, reliability: float, rnd: random.Random) -> list[dict[str, Any]]:
    """What an annotator of the given reliability submits for a task."""
    def pick(right: str, options: tuple[str, ...]) -> str:
        return right if rnd.random() < reliability else rnd.choice(options)

    topics = [pick(truth.topics[0], TOPICS)]
    if len(truth.topics) > 1 and rnd.random() < reliability:
        topics.append(truth.topics[1])
    if rnd.random() > reliability:
        topics.append(rnd.choice([t for t in TOPICS if t not in topics]))
    rating = truth.helpfulness if rnd.random() < reliability else min(5, max(1, truth.helpfulness + rnd.choice((-2, -1, 1))))
    out = [
        {"from_name": "sentiment", "to_name": "text", "type": "choices",
         "value": {"choices": [pick(truth.sentiment, SENTIMENTS)]}},
        {"from_name": "topics", "to_name": "text", "type": "choices", "value": {"choices": topics}},
        {"from_name": "helpfulness", "to_name": "text", "type": "rating", "value": {"rating": rating}},
    ]
    for (start, end), label in ((truth.person, "PER"), (truth.org, "ORG")):
        if rnd.random() < 0.5 + reliability / 2:
            start, end = _slipped(start, end, len(truth.text), reliability, rnd)
            out.append({"from_name": "entities", "to_name": "text", "type": "labels",
                        "value": {"start": start, "end": end, "text": truth.text[start:end],
                                  "labels": [pick(label, ("PER", "ORG"))]}})
    return out


def _slipped(start: int, end: int, length: int, reliability: float, rnd: random.Random) -> tuple[int, int]:
    """A span's boundaries as a hurried annotator marks them: now and then a character or two off at one end.

    Overlap matching (the default flag, F1 at ``--span-jaccard``) forgives such a slip; exact matching counts it
    as a miss: the demo's report shows the difference.
    """
    if rnd.random() < (1.0 - reliability) * 0.6:
        shift = rnd.choice((-2, -1, 1, 2))
        if rnd.random() < 0.5:
            start = min(max(0, start + shift), end - 1)
        else:
            end = max(min(length, end + shift), start + 1)
    return start, end


def truth_result(truth: Truth) -> list[dict[str, Any]]:
    """The known answer of a task, as the result of an annotation imported with it (its ground truth)."""
    return annotate(truth, 1.0, random.Random(0))


def references_of(truths: Sequence[Truth], rnd: random.Random) -> list[dict[str, Any]]:
    """Per task, what the demo imports with it beside its data.

    That is every :data:`MODELS` version's prediction, and on the first tasks (:data:`GROUND_TRUTH_SHARE`, at
    most 30) the known answer as an imported annotation.
    """
    known = min(30, max(1, round(len(truths) * GROUND_TRUTH_SHARE)))
    out = []
    for index, truth in enumerate(truths):
        extra: dict[str, Any] = {"predictions": [
            {"model_version": version, "score": reliability, "result": annotate(truth, reliability, rnd)}
            for version, reliability in MODELS]}
        if index < known:
            extra["annotations"] = [{"result": truth_result(truth), "ground_truth": True}]
        out.append(extra)
    return out


def simulated_export(n_tasks: int, *, annotators: int = 5, per_task: tuple[int, int] = (2, 3), seed: int = 0,
                     start: datetime | None = None, spacing: timedelta = timedelta(minutes=2),
                     references: bool = False) -> list[dict[str, Any]]:
    """The demo's project as a Label Studio JSON export, without a server.

    For tests, benchmarks and screenshots.

    Annotator ``k`` (user id ``k + 1``) errs as the demo's annotator ``k``
    does; each task gets ``per_task`` annotators at random, and annotations
    are created ``spacing`` apart in a random order from ``start``. With
    ``references``, the tasks carry the demo's references
    (:func:`references_of`): predictions of every model version, and the
    known answer imported as ground truth on the first tasks.
    """
    rnd = random.Random(seed)
    truths = make_truths(n_tasks, rnd)
    start = start or datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    low, high = per_task
    jobs = [(task, who) for task in range(n_tasks)
            for who in rnd.sample(range(annotators), rnd.randint(low, min(high, annotators)))]
    rnd.shuffle(jobs)
    tasks: list[dict[str, Any]] = [{"id": i + 1, "data": {"text": t.text}, "meta": {}, "annotations": []}
                                   for i, t in enumerate(truths)]
    for order, (task, who) in enumerate(jobs):
        when = (start + order * spacing).isoformat().replace("+00:00", "Z")
        result = annotate(truths[task], RELIABILITY[who % len(RELIABILITY)], rnd)
        tasks[task]["annotations"].append({"id": order + 1, "completed_by": who + 1, "result": result,
                                           "was_cancelled": False, "ground_truth": False,
                                           "created_at": when, "updated_at": when})
    if references:
        first = (start - spacing).isoformat().replace("+00:00", "Z")
        for task, extra in zip(tasks, references_of(truths, random.Random(seed + 1)), strict=True):
            task["predictions"] = [{"id": task["id"] * 10 + k, "created_at": first, **prediction}
                                   for k, prediction in enumerate(extra["predictions"])]
            for imported in extra.get("annotations", ()):
                task["annotations"].append({"id": 10**6 + task["id"], "completed_by": annotators + 1,
                                            "import_id": task["id"], "was_cancelled": False, "created_at": first,
                                            "updated_at": first, **imported})
    return tasks


def status_command(url: str, secret_file: Path) -> str:
    """The command that asks the service for ``/status``, passing the secret from its file.

    >>> status_command("http://127.0.0.1:9090", Path("/data/service.secret"))
    'curl -s -H "X-Agreement-Secret: $(cat /data/service.secret)" http://127.0.0.1:9090/status'
    """
    return f'curl -s -H "X-Agreement-Secret: $(cat {secret_file})" {url}/status'


def live_report_text(url: str, secret: str, secret_file: Path) -> str:
    """Where the service serves the report live: the address a browser opens, and the request a script sends.

    The browser's address holds the secret (``/s/<secret>/report``): the demo's own, made for this run. A script
    sends it in the ``X-Agreement-Secret`` header instead, read from its file.

    >>> print(live_report_text("http://127.0.0.1:9090", "s3cret", Path("/data/service.secret")))
    The service serves the report live too; open it in a browser (the address holds the demo's secret):
      http://127.0.0.1:9090/s/s3cret/report
    or from a script, with the secret in a header:
      curl -s -H "X-Agreement-Secret: $(cat /data/service.secret)" http://127.0.0.1:9090/report
    """
    return ("The service serves the report live too; open it in a browser (the address holds the demo's secret):\n"
            f"  {url}/s/{secret}/report\n"
            "or from a script, with the secret in a header:\n"
            f'  curl -s -H "X-Agreement-Secret: $(cat {secret_file})" {url}/report')


def latency_text(latency: dict[str, Any]) -> str:
    """``/status``'s ``write_latency_ms`` in words, with its unit.

    >>> latency_text({"p50": 3011.2, "p95": 9725.4, "n": 741})
    'event-to-meta latency: median 3011 ms, 95th percentile 9725 ms, over 741 events'
    >>> latency_text({"p50": None, "p95": None, "n": 0})
    'event-to-meta latency: no event written yet'
    """
    if not latency.get("n"):
        return "event-to-meta latency: no event written yet"
    return (f"event-to-meta latency: median {latency['p50']:.0f} ms, 95th percentile {latency['p95']:.0f} ms, over "
            f"{latency['n']:,} events")


WIDTH = 100
"""The most characters a line of the demo's progress takes (a terminal of 100 columns shows it unwrapped)."""


def live_cost_lines(status: dict[str, Any], *, project: int, annotations: int, drained: float | None,
                    interval: float) -> list[str]:
    """What the live path cost, from ``/status``: where events' time went, writes per annotation, the drain.

    >>> status = {"writes": {"written": 770, "written from its event, read again": 10, "unchanged": 20},
    ...           "projects": {"1": {"event_latency_ms": {
    ...     "queue": {"p50": 4.0, "p95": 30.0}, "read": {"p50": 60.0, "p95": 200.0},
    ...     "scoring": {"p50": 20.0, "p95": 50.0}, "write": {"p50": 90.0, "p95": 300.0}}}}}
    >>> print("\\n".join(live_cost_lines(status, project=1, annotations=750, drained=3.2, interval=20)))
    where an event's time went, ms median/95th: queue 4/30, read 60/200, scoring 20/50, write 90/300
    meta writes: 780 for 750 annotations (1.04 an annotation; 20 refreshes found the meta right)
    of which 10 written from an event, then again from a read (Label Studio's answer differed from the event)
    the writes waiting drained 3 s after the last annotation (a pass every 20 s)
    """
    parts = ((status.get("projects") or {}).get(str(project)) or {}).get("event_latency_ms") or {}
    times = ", ".join(f"{part} {_ms(parts[part].get('p50'))}/{_ms(parts[part].get('p95'))}"
                      for part in ("queue", "read", "scoring", "write") if part in parts)
    writes = status.get("writes") or {}
    again = int(writes.get(READ_AGAIN, 0))
    written = int(writes.get("written", 0)) + again
    lines = [f"where an event's time went, ms median/95th: {times}"] if times else []
    per = f"{written / annotations:.2f} an annotation; " if annotations else ""
    lines.append(f"meta writes: {written:,} for {annotations:,} annotations ({per}"
                 f"{int(writes.get('unchanged', 0)):,} refreshes found the meta right)")
    if again:
        lines.append(f"of which {again:,} written from an event, then again from a read (Label Studio's answer "
                     f"differed from the event)")
    if drained is not None:
        lines.append(f"the writes waiting drained {drained:.0f} s after the last annotation "
                     f"(a pass every {interval:.0f} s)")
    return lines


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _number(value: float | None) -> str:
    """A score as the demo prints it: 3 decimals, as the report shows them; "-" while undefined."""
    return "-" if value is None else f"{value:.3f}"


def _scores(control: dict[str, Any]) -> str:
    """A control's SPA, its interval and alpha, as ``/status`` gives them, in a few words."""
    if control["spa"] is None:
        return "-"
    ci = control["ci"]
    interval = f" [{_number(ci[0])}, {_number(ci[1])}]" if ci and ci[0] is not None else ""
    return f"SPA {_number(control['spa'])}{interval} α {_number(control['alpha'])}"


def progress_lines(status: dict[str, Any], elapsed: float, submitted: int, *, width: int = WIDTH) -> list[str]:
    """One step of the demo's progress: the time, the annotations and each control's scores, in lines of ``width``.

    The controls follow the time on its line while they fit, then on lines of their own, indented; a control
    name too long for a line is cut short in its middle.

    >>> status = {"controls": {"sentiment": {"spa": 0.8512, "ci": [0.8, 0.9], "alpha": 0.7},
    ...                        "topics": {"spa": None, "ci": None, "alpha": None}}}
    >>> progress_lines(status, 12.34, 120)
    ['[ 12.3 s]  120 annotations | sentiment: SPA 0.851 [0.800, 0.900] α 0.700 | topics: -']
    """
    lines = [f"[{elapsed:5.1f} s] {submitted:4d} annotations"]
    for name, control in status["controls"].items():
        scores = _scores(control)
        room = width - len("    : ") - len(scores)
        shown = name if len(name) <= room else f"{name[:room // 2 - 1]}…{name[len(name) - (room - room // 2):]}"
        part = f"{shown}: {scores}"
        if len(lines[-1]) + len(" | ") + len(part) <= width:
            lines[-1] += f" | {part}"
        else:
            lines.append(f"    {part}")
    return lines


def score_lines(status: dict[str, Any]) -> list[str]:
    """The project's scores at the end of the demo, a line per control, as precise as its progress.

    >>> score_lines({"controls": {"sentiment": {"tag": "Choices", "level": "nominal", "n_items": 300,
    ...                                         "spa": 0.8512, "ci": [0.8, 0.9], "alpha": 0.70123}}})
    ['  sentiment  Choices  nominal  items  300  SPA 0.851 [0.800, 0.900]  alpha 0.701']
    """
    controls = status["controls"]
    wide = min(max((len(name) for name in controls), default=0), 30)
    lines = []
    for name, control in controls.items():
        ci = control["ci"] or [None, None]
        lines.append(f"  {name:{wide}s}  {control['tag']:8s} {control['level']:8s} items {control['n_items']:4d}  "
                     f"SPA {_number(control['spa'])} [{_number(ci[0])}, {_number(ci[1])}]  "
                     f"alpha {_number(control['alpha'])}")
    return lines


def _status(url: str, secret: str, project: int) -> dict[str, Any]:
    answer = requests.get(f"{url}/status", headers={"X-Agreement-Secret": secret}, timeout=10)
    answer.raise_for_status()
    return cast(dict[str, Any], answer.json()["projects"][str(project)])


def _wait_for_service(url: str, secret: str, project: int, process: subprocess.Popen[bytes],
                      timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("The agreement service exited; see its log in the demo's data dir.")
        try:
            if _status(url, secret, project)["passes"] >= 1:
                return
        except (requests.RequestException, KeyError):
            pass
        time.sleep(0.3)
    raise RuntimeError("The agreement service did not come up in time.")


def _write_report(url: str, token: str, project: int, data_dir: Path, out: TextIO) -> Path:
    """The admin report of the demo project, in the data dir.

    It is what ``ls-agreement report --project`` writes.

    Raises
    ------
    LabelStudioError, OSError
        If the project cannot be read, or the page cannot be written.
    """
    from plugin.keeper.sync import report_project
    from plugin.report import write_report, written_text

    report = report_project(LabelStudioClient(Connection(url=url, api_key=token)), project, url,
                            mapping=MappingOptions(),
                            scoring=ScoringOptions(min_gt_accuracy=MIN_GT_ACCURACY, min_gt_items=3))
    path = data_dir / "report.html"
    print(written_text(report, path, write_report(report, path)), file=out, flush=True)
    return path.resolve()


def _every_item(first: Any, total: str) -> Iterator[Any]:
    """Every item of a paged read of the SDK, asking for no page past the last.

    ``first`` is the SDK's pager at its first page; ``total`` names the field of a page's answer that counts the
    items (``count`` for projects, ``total`` for tasks). The SDK's own pager asks for pages until one is empty, and
    Label Studio answers a page past the last with a 404 ("Invalid page.") and logs a traceback: 1,000 tasks in
    pages of 1,000 are one request here.
    """
    page, read = first, 0
    while page is not None:
        items = list(page.items or [])
        yield from items
        read += len(items)
        count = getattr(page.response, total, None)
        if not items or (isinstance(count, int) and read >= count):
            return
        page = page.next_page()


def _tasks(admin: LabelStudio, project: int) -> Iterator[Any]:
    """The project's tasks (the SDK's objects), in pages of 1,000."""
    return _every_item(admin.tasks.list(project=project, page_size=1000), "total")


def _stop_on_signals() -> None:
    """Make Ctrl-C and SIGTERM both end the demo through its clean-up.

    This holds also when SIGINT was inherited as ignored.
    """
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)


def run_demo(settings: DemoSettings, out: TextIO) -> int:
    """Run the demo; return 0 when it finished, 1 when its report could not be written.

    Stopping it with Ctrl-C also returns 0.
    """
    if threading.current_thread() is threading.main_thread():
        _stop_on_signals()
    rnd = random.Random(settings.seed)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"Starting Label Studio (data in {settings.data_dir}; the first start migrates its database, "
          "about a minute)...", file=out, flush=True)
    server = localserver.start(settings.data_dir / "label-studio", port=settings.port, command=settings.label_studio)
    service: subprocess.Popen[bytes] | None = None
    report_failed = False
    try:
        print(f"Label Studio is up at {server.url} (login {localserver.ADMIN_EMAIL} / {localserver.ADMIN_PASSWORD})",
              file=out, flush=True)
        admin = LabelStudio(base_url=server.url, api_key=server.token, timeout=120)
        for old in _every_item(admin.projects.list(page_size=100), "count"):
            if old.title == TITLE:
                admin.projects.delete(id=old.id)
        # Label Studio counts a task as labeled once it holds this many annotations (its overlap): the most the
        # simulation gives a task, so a task with fewer is still waiting for annotators, as in a real project.
        project = int(cast(Any, admin.projects.create(
            title=TITLE, label_config=CONFIG, description="Simulated annotators; scores in task meta",
            maximum_annotations=settings.per_task[1], overlap_cohort_percentage=100)).id)
        truths = make_truths(settings.tasks, rnd)
        # Each task comes with two model versions' predictions, and the first tasks with their known answer
        # (imported annotations are ground truth): the report's "Against references" section.
        admin.projects.import_tasks(id=project, request=cast(Any, [
            {"data": {"text": t.text}, "meta": {"source": "demo"}, **extra}
            for t, extra in zip(truths, references_of(truths, rnd), strict=True)]))
        tasks = sorted(int(t.id) for t in _tasks(admin, project))
        print(f"Created project {project} with {len(tasks)} tasks; signing up {settings.annotators} annotators...",
              file=out, flush=True)
        annotators = [localserver.sign_up(server.url, f"annotator{i + 1}@example.com")[1]
                      for i in range(settings.annotators)]
        secret = secrets.token_urlsafe(24)
        secret_file = settings.data_dir / "service.secret"
        secret_file.touch(mode=0o600)
        secret_file.chmod(0o600)
        secret_file.write_text(secret + "\n")
        service_url = f"http://127.0.0.1:{settings.service_port}"
        env = {**os.environ, "LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": server.token,
               "AGREEMENT_WEBHOOK_SECRET": secret}
        log = open(settings.data_dir / "service.log", "ab")  # noqa: SIM115 - closed with the process
        service = subprocess.Popen([sys.executable, "-m", "plugin", "serve", "--project", str(project), "--port",
                                    str(settings.service_port), "--reconcile-interval",
                                    str(settings.reconcile_interval), "--mirror-to-data", "--min-gt-accuracy",
                                    str(MIN_GT_ACCURACY), "--min-gt-items", "3",
                                    # Label Studio on SQLite takes one write at a time (past its lock's wait it
                                    # answers 500 "database is locked"), yet one writer falls behind five
                                    # annotators on a loaded machine: two, one of them kept for events
                                    "--writers", "2"],
                                   env=env, stdout=log, stderr=subprocess.STDOUT)
        _wait_for_service(service_url, secret, project, service)
        print(f"The agreement service is live; its status, with the secret it was given (in {secret_file}):\n"
              f"  {status_command(service_url, secret_file.resolve())}\nAnnotators start now.\n", file=out, flush=True)

        low, high = settings.per_task
        jobs = [(task, who) for task in range(len(tasks))
                for who in rnd.sample(range(settings.annotators), rnd.randint(low, min(high, settings.annotators)))]
        rnd.shuffle(jobs)
        queues: list[list[int]] = [[task for task, w in jobs if w == who] for who in range(settings.annotators)]
        submitted = [0]
        lock = threading.Lock()
        started = time.monotonic()

        def work(who: int) -> None:
            client = LabelStudio(base_url=server.url, api_key=annotators[who], timeout=120)
            mine = random.Random(settings.seed * 100 + who)
            reliability = RELIABILITY[who % len(RELIABILITY)]
            for index in queues[who]:
                client.annotations.create(id=tasks[index], result=annotate(truths[index], reliability, mine))
                with lock:
                    submitted[0] += 1
                time.sleep(settings.pace * mine.random() * 2)

        with ThreadPoolExecutor(max_workers=settings.annotators) as pool:
            futures = [pool.submit(work, who) for who in range(settings.annotators)]
            while not all(f.done() for f in futures):
                time.sleep(2.0)
                status = _status(service_url, secret, project)
                print("\n".join(progress_lines(status, time.monotonic() - started, submitted[0])), file=out,
                      flush=True)
            for future in futures:
                future.result()
        # Events made each task's scores right within a second; the project's expected disagreement moved
        # with every annotation, which the next full pass brings to every task's alpha.
        print("\nAnnotation is over; waiting for the service's next pass "
              f"(every {settings.reconcile_interval:.0f} s)...", file=out, flush=True)
        ended = time.monotonic()
        passes = _status(service_url, secret, project)["passes"]
        drained: float | None = None
        while True:
            status = _status(service_url, secret, project)
            if drained is None and not status["pending_writes"]:
                drained = time.monotonic() - ended
            if status["passes"] > passes and not status["pending_writes"]:
                break
            time.sleep(0.5)
        final = requests.get(f"{service_url}/status", headers={"X-Agreement-Secret": secret}, timeout=10).json()
        print("\n" + "\n".join(progress_lines(status, time.monotonic() - started, submitted[0])), file=out)
        print(f"\nProject scores (from {service_url}/status; its secret is in {secret_file}):", file=out)
        print("\n".join(score_lines(status)), file=out)
        print(f"  {latency_text(final['write_latency_ms'])}", file=out)
        for line in live_cost_lines(final, project=project, annotations=submitted[0], drained=drained,
                                    interval=settings.reconcile_interval):
            print(f"  {line}", file=out)
        for name, references in status.get("references", {}).items():
            for line in reference_lines(name, references):
                print(f"  {line}", file=out)
        flagged = sum(1 for t in _tasks(admin, project)
                      if ((t.meta or {}).get("agreement") or {}).get("flagged"))
        print(f"\n{flagged} tasks are flagged for low agreement. Open the project's \"Low agreement\" tab: it lists "
              f"them worst first, with their score in the agreement_score column; each task's scores are in its "
              f"meta:\n"
              f"  {server.url}/projects/{project}/data\n"
              f"  login: {localserver.ADMIN_EMAIL} / {localserver.ADMIN_PASSWORD}\n"
              "  To connect your own scripts or `ls-agreement sync`, get an API token under Account & Settings "
              "(Personal Access Token).", file=out, flush=True)
        try:
            written = f"The admin report: {_write_report(server.url, server.token, project, settings.data_dir, out)}"
        except (LabelStudioError, ValueError, OSError) as error:
            report_failed, written = True, f"The admin report could not be written: {error}"
        labeled = sum(1 for t in _tasks(admin, project) if t.is_labeled)
        print(f"\nLabel Studio counts {labeled} of {len(tasks)} tasks as labeled (overlap {settings.per_task[1]}); the "
              f"others still wait for annotators.\n{written}", file=out)
        print(live_report_text(service_url, secret, secret_file.resolve()), file=out, flush=True)
        if settings.wait:
            print("\nLabel Studio and the agreement service keep running. Press Ctrl-C to stop both.", file=out,
                  flush=True)
            while service.poll() is None:
                time.sleep(1.0)
        return 1 if report_failed else 0
    except KeyboardInterrupt:
        print("\nStopping...", file=out)
        return 1 if report_failed else 0
    finally:
        if service is not None:
            localserver.stop_process(service)
        server.stop()
        print("Stopped Label Studio and the agreement service.", file=out, flush=True)
