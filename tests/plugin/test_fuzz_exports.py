"""Fuzzed Label Studio exports (tests/plugin/export_strategies.py) through every path that reads one.

Each export is read from a file (:func:`plugin.labelstudio.export.open_export`), with its labeling config and
without it (the controls inferred from the results), and then:

- scored offline as ``ls-agreement sync --export`` scores it (:func:`plugin.keeper.sync.score_export`), with a
  consensus method drawn from :data:`plugin.settings.CONSENSUS_METHODS` (a scoring of every control costs about
  0.1-0.3 s: one method an example fuzzes more examples, and every method is drawn in a run);
- held as the live state holds a project, one task at a time as events bring them (each task first read part-way
  through its annotations, in any order), equal to the batch read of the same tasks;
- drawn as the admin report (``ls-agreement report --export``), as HTML and as JSON (fewer examples: matplotlib
  draws the charts).

Nothing may raise, and no bug may be contained (a control left not scored, or results counted as "a bug in
ls-agreement"). What was read is accounted for:

- every annotation in the export is counted, or skipped under one annotation-level reason, exactly;
- Rating, Number and TextArea (one answer per annotator and task): on each task, the control's results in the
  counted annotations are exactly its rows plus the skips that name it (a duplicate answer is a skip, the first
  counts);
- every other result of a counted annotation gives its annotator a row of its control on the task, or the task's
  skips name its control (for a control the config lacks: its name) under a reason.
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agreement import UndefinedMeasureWarning
from plugin.keeper.sync import score_export
from plugin.labelstudio.export import Export, open_export
from plugin.mapping.annotations import GROUND_TRUTH_SKIP, Skips, collect_submissions, task_id
from plugin.mapping.labelconfig import Control
from plugin.report import build_report, report_json
from plugin.report.page import render_html
from plugin.settings import CONSENSUS_METHODS, MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from tests.plugin.export_strategies import FuzzExport, exports
from tests.profiles import examples

MAPPING = MappingOptions()
# Few resamples and sampled corpora: what is fuzzed is the shape of the data, not the intervals' precision.
SCORING = ScoringOptions(n_resamples=20, gamma_samples=3)
# Why an annotation is not counted, one reason each (plugin.mapping.annotations.submission_of and
# latest_per_annotator): with the counted ones, they are every annotation of the export.
ANNOTATION_SKIPS = frozenset({
    "annotation that is not an object", "skipped (cancelled) annotation",
    "annotation without an annotator (completed_by)", GROUND_TRUTH_SKIP, "annotation whose result is not a list",
    "older annotation by the same annotator on a task (the latest counts)",
})
# Controls whose results are one answer per annotator and task: each result is a row or a skip, exactly.
SINGLE_ANSWER = frozenset({"rating", "number", "textarea"})
REFERENCE = "in a reference: "
_TOLD = re.compile(r"its traceback is in (\S+?\.txt)")
FUZZ = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}


@contextmanager
def _read(export: FuzzExport) -> Iterator[list[tuple[str, Export, dict[str, Control]]]]:
    """The export written to a file and read back, with its config and without (controls inferred)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "export.json"
        path.write_text(export.text(), encoding="utf-8")
        yield [(how, *open_export(path, label_config=config))
               for how, config in (("with its config", export.config), ("config inferred", None))]


def _bugs(reasons: Iterator[str] | list[str]) -> list[str]:
    """The reasons that tell of a contained bug, each with its traceback where the reason names its file."""
    out = []
    for text in reasons:
        if "bug in ls-agreement" in text or text.startswith("result the mapping failed on"):
            told = _TOLD.search(text)
            kept = Path(told.group(1)) if told else None
            out.append(text + ("\n" + kept.read_text() if kept is not None and kept.exists() else ""))
    return out


def _live(tasks: list[Mapping[str, Any]], controls: Mapping[str, Control], rnd: random.Random) -> ProjectState:
    """The state a service holds after events: each task read first part-way through its annotations, in any
    order, then as it ends, in another order."""
    state = ProjectState(None, controls, mapping=MAPPING, scoring=SCORING)
    early = []
    for task in tasks:
        if task_id(task) is None:  # refused at each read: only its last read is one a batch read makes
            continue
        annotations = task.get("annotations") or []
        early.append({**task, "annotations": annotations[: rnd.randint(0, len(annotations))]})
    rnd.shuffle(early)
    for task in early:
        state.set_task(task)
    final = list(tasks)
    rnd.shuffle(final)
    for task in final:
        state.set_task(task)
    return state


def _differing(live: Mapping[int, Any], batch: Mapping[int, Any]) -> list[tuple[int, Any, Any]]:
    """The tasks whose scores differ, with both: a failure shows these rather than pytest's diff of every task."""
    return [(task, live.get(task), batch.get(task)) for task in sorted(live.keys() | batch.keys())
            if live.get(task) != batch.get(task)]


def _rows_by_task(state: ProjectState) -> dict[str, dict[int, list[tuple[Any, ...]]]]:
    return {name: {task: sorted(control.task_records(task), key=repr) for task in sorted(control.records)}
            for name, control in state.controls.items()}


def _check_accounting(tasks: list[Mapping[str, Any]], controls: Mapping[str, Control], state: ProjectState) -> None:
    """Every annotation and every result read is scored or counted under a reason (see the module notes)."""
    skips = state.skips().reasons
    tasks = [task for task in tasks if task_id(task) is not None]  # the others are refused whole, and counted
    n_read = sum(len(task.get("annotations") or []) for task in tasks)
    assert n_read == state.n_annotations() + sum(skips[reason] for reason in ANNOTATION_SKIPS), skips
    by_task = state.tasks.skips_by_task()
    for task in tasks:
        identifier = task_id(task)
        told = Counter({reason: n for reason, n in (by_task.get(identifier) or {}).items()
                        if not reason.startswith(REFERENCE)})  # the references' own skips are told apart
        rows = {name: control.task_records(identifier) for name, control in state.controls.items()}
        results: Counter[str] = Counter()
        for submission in collect_submissions([task], Skips()).get(identifier, []):
            for result in submission.results:
                relation = str(result.get("type", "")).lower() == "relation"
                name = "relations" if relation else result.get("from_name")
                results[name] += 1
                control = controls.get(name)
                if control is None:  # a control the config lacks: counted under its name
                    shown = "Relations" if relation else repr(name)
                    assert any("not in the config" in reason and shown in reason for reason in told), (
                        identifier, result, told)
                    continue
                named = any(reason.endswith(f": {control.describe()}") for reason in told)
                assert named or any(row[2] == submission.annotator for row in rows[name]), (
                    identifier, submission.annotator, result, told)
        for name, control in controls.items():
            if control.tag in SINGLE_ANSWER and not control.per_region and not control.pattern \
                    and not control.problems:
                n_told = sum(n for reason, n in told.items() if reason.endswith(f": {control.describe()}"))
                assert results[name] == len(rows[name]) + n_told, (identifier, name, rows[name], told)


@settings(max_examples=examples(30), **FUZZ)
@given(exports(), st.sampled_from(CONSENSUS_METHODS), st.randoms(use_true_random=False))
def test_an_export_is_scored_live_and_batch_alike_and_every_result_is_accounted_for(export, method, rnd):
    """The export is scored without a bug, the live state equals the batch, and the accounting holds (see the
    module notes)."""
    with _read(export) as reads, warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        for how, tasks, controls in reads:
            listed = list(tasks)
            batch = ProjectState.from_tasks(tasks, controls, mapping=MAPPING, scoring=SCORING)
            live = _live(listed, controls, rnd)
            assert live.skips().reasons == batch.skips().reasons, how
            assert _rows_by_task(live) == _rows_by_task(batch), how
            differing = _differing(live.task_scores(), batch.task_scores())
            assert not differing, (how, differing[:2])
            assert not _bugs(batch.skips().reasons), how
            _check_accounting(listed, controls, batch)
            scores, to_write = score_export(tasks, controls, mapping=MAPPING,
                                            scoring=replace(SCORING, consensus=method))
            bugs = _bugs([*scores.skips.reasons, *getattr(scores, "not_scored", {}).values()])
            assert not bugs, (how, bugs)
            assert set(scores.controls) == set(controls), how
            assert scores.skips.reasons == batch.skips().reasons, how
            assert scores.n_annotations == batch.n_annotations() and 0 <= to_write <= len(scores.tasks), how


@settings(max_examples=examples(8), **FUZZ)
@given(exports())
def test_the_report_of_an_export_is_drawn_as_html_and_json(export):
    """The admin report of any export is drawn whole: every control's tables, as a page and as strict JSON."""
    with _read(export) as reads, warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        # numpy deprecates reading a one-element array as a scalar, and will refuse it: a chart must not do it
        warnings.filterwarnings("error", message="Conversion of an array with ndim > 0 to a scalar")
        for how, tasks, controls in reads:
            state = ProjectState.from_tasks(tasks, controls, mapping=MAPPING, scoring=SCORING)
            report = build_report(state.snapshot(), source="Export export.json", generated_at="2026-01-01 00:00 UTC",
                                  people=tasks.people)
            page = render_html(report)
            assert page.startswith("<!DOCTYPE html>") or "<html" in page[:200], how
            json.dumps(report_json(report), allow_nan=False)
            kinds = report.notes[report.notes["kind"].isin(["not shown", "not scored"])] if len(report.notes) \
                else report.notes
            assert not _bugs(kinds["message"].astype(str).tolist() if len(kinds) else []), how
            assert report.overview["n_tasks"] == len({task_id(task) for task in tasks} - {None}), how
