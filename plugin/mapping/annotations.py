"""Plain annotation records from Label Studio tasks, with the rules for what counts.

Skipped annotations (``was_cancelled``), drafts and predictions do not count;
when one annotator has several annotations on a task, the latest counts.
Everything left out is counted in a :class:`Skips` report, never dropped
silently.

Ground truth. In Label Studio a reviewer marks one annotator's annotation as
ground truth (``ground_truth: true``): it stays that annotator's judgement and
counts as their annotation, like any other. Annotations *imported* with the
tasks are marked ground truth too, by default (Label Studio 1.23 sets
``ground_truth`` unless the import says ``false``): such an imported reference
is no annotator's work and does not count, unless ``include_ground_truth``
asks for it, as its own annotator ``gt:<completed_by>``. An annotation was
imported when its ``import_id`` is set (the id it had in the imported file)
or its ``updated_by`` is present and empty, which an annotation made in the
app or through the API never has. An imported annotation whose import said
``ground_truth: false`` (a migration of annotators' work) counts as its
``completed_by``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BUG_SKIP",
    "GROUND_TRUTH_SKIP",
    "Skips",
    "Submission",
    "annotator_key",
    "collect_submissions",
    "is_imported",
    "latest_per_annotator",
    "people_of_tasks",
    "person_name",
    "submission_of",
    "task_id",
]

GROUND_TRUTH_SKIP = "ground truth imported with the tasks (a reference, not an annotator's work)"
BUG_SKIP = "result not scored, a bug in ls-agreement (the log says where its traceback is)"
"""The reason of results a bug kept from being mapped or added to their control (:mod:`plugin.bugs`)."""


@dataclass
class Skips:
    """Counts of what was left out, by reason, for the run's report."""

    reasons: Counter[str] = field(default_factory=Counter)

    def add(self, reason: str, count: int = 1) -> None:
        """Count ``count`` occurrences of ``reason`` (a short phrase)."""
        self.reasons[reason] += count

    @property
    def total(self) -> int:
        """How many things were skipped in all."""
        return sum(self.reasons.values())

    def as_dict(self) -> dict[str, int]:
        """``{reason: count}``, most frequent first, for ``/status`` and the JSON report."""
        return dict(self.reasons.most_common())

    def lines(self) -> list[str]:
        """One line per reason, most frequent first."""
        return [f"{count} skipped: {reason}" for reason, count in self.reasons.most_common()]


@dataclass(frozen=True, slots=True)
class Submission:
    """One annotator's counted annotation of one task.

    Attributes
    ----------
    task : int
        Task id.
    annotation : int
        Annotation id.
    annotator : str
        The annotator: the user id as text (``completed_by``), or ``"gt:<id>"``
        for an annotation imported with the tasks, counted when asked.
    results : tuple of dict
        The annotation's result items, as Label Studio stores them.
    updated_at : str
        When it was last changed (ISO 8601).
    created_at : str
        When it was first submitted (ISO 8601): the report's timeline.
    """

    task: int
    annotation: int
    annotator: str
    results: tuple[Mapping[str, Any], ...]
    updated_at: str = ""
    created_at: str = ""


def annotator_key(completed_by: Any) -> str | None:
    """The annotator of ``completed_by``, an int in task lists, an object ``{id, email}`` in ``tasks.get``.

    An object without an id (some exports and SDK-made tasks know annotators by email only) is its email.

    >>> annotator_key(7), annotator_key({"id": 7, "email": "ann@example.com"}), annotator_key({"email": "ann@x.org"})
    ('7', '7', 'ann@x.org')
    """
    if isinstance(completed_by, Mapping):
        identifier = completed_by.get("id")
        completed_by = completed_by.get("email") if identifier is None else identifier
    if isinstance(completed_by, bool) or completed_by is None:
        return None
    if isinstance(completed_by, int):
        return str(completed_by)
    if isinstance(completed_by, str) and completed_by.strip():
        return completed_by.strip()
    return None


def person_name(user: Any) -> str:
    """How reports name a Label Studio user: "First Last <email>", else the email, the name, or the id.

    ``user`` is a user object (``users.list``, or ``completed_by`` in a JSON export) or a mapping with the same
    fields.

    >>> person_name({"id": 2, "first_name": "Ann", "last_name": "Lee", "email": "ann@example.com"})
    'Ann Lee <ann@example.com>'
    >>> person_name({"id": 3, "first_name": "", "last_name": "", "email": "bo@example.com"}), person_name({"id": 4})
    ('bo@example.com', '4')
    """
    def field_of(key: str) -> str:
        value = user.get(key) if isinstance(user, Mapping) else getattr(user, key, None)
        return value.strip() if isinstance(value, str) else ""

    name = " ".join(part for part in (field_of("first_name"), field_of("last_name")) if part)
    email = field_of("email")
    identifier = user.get("id") if isinstance(user, Mapping) else getattr(user, "id", None)
    return f"{name} <{email}>" if name and email else (email or name or str(identifier))


def people_of_tasks(tasks: Iterable[Any]) -> dict[str, str]:
    """Annotator id -> :func:`person_name` from the user objects a JSON export writes as ``completed_by``.

    A task list from the API carries ids only; those annotators are left to :meth:`users` (or named by id).

    >>> people_of_tasks([{"annotations": [{"completed_by": {"id": 2, "email": "ann@example.com"}},
    ...                                   {"completed_by": 3}]}])
    {'2': 'ann@example.com'}
    """
    out: dict[str, str] = {}
    for task in tasks:
        annotations = task.get("annotations") if isinstance(task, Mapping) else None
        for annotation in annotations if isinstance(annotations, list) else ():
            user = annotation.get("completed_by") if isinstance(annotation, Mapping) else None
            key = annotator_key(user) if isinstance(user, Mapping) else None
            if key is not None and key not in out:
                out[key] = person_name(user)
    return out


def _as_int(value: Any) -> int | None:
    """An id as an int64 (what a project's state holds), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, int) and -(2**63) < value < 2**63:
        return value
    return None


def task_id(task: Any) -> int | None:
    """The id of a task object, or None when it has none."""
    return _as_int(task.get("id")) if isinstance(task, Mapping) else None


def is_imported(annotation: Mapping[str, Any]) -> bool:
    """Whether an annotation was imported with the tasks rather than made in Label Studio.

    See the module notes.
    """
    if annotation.get("import_id") is not None:
        return True
    return "updated_by" in annotation and annotation["updated_by"] is None


def submission_of(annotation: Any, task: int, skips: Skips, *, include_ground_truth: bool = False
                  ) -> Submission | None:
    """The counted submission an annotation makes, or None (counted in ``skips``) when it does not count."""
    if not isinstance(annotation, Mapping):
        skips.add("annotation that is not an object")
        return None
    if annotation.get("was_cancelled"):
        skips.add("skipped (cancelled) annotation")
        return None
    annotator = annotator_key(annotation.get("completed_by"))
    if annotator is None:
        skips.add("annotation without an annotator (completed_by)")
        return None
    if annotation.get("ground_truth") and is_imported(annotation):
        if not include_ground_truth:
            skips.add(GROUND_TRUTH_SKIP)
            return None
        annotator = f"gt:{annotator}"
    results = annotation.get("result")
    if not isinstance(results, list):
        skips.add("annotation whose result is not a list")
        return None
    kept = tuple(results) if all(type(r) is dict for r in results) else tuple(r for r in results
                                                                           if isinstance(r, Mapping))
    if len(kept) != len(results):
        skips.add("result item that is not an object", len(results) - len(kept))
    return Submission(task=task, annotation=_as_int(annotation.get("id")) or 0, annotator=annotator, results=kept,
                      updated_at=str(annotation.get("updated_at") or annotation.get("created_at") or ""),
                      created_at=str(annotation.get("created_at") or annotation.get("updated_at") or ""))


def latest_per_annotator(submissions: Iterable[Submission], skips: Skips) -> list[Submission]:
    """One submission per annotator, the latest (by ``updated_at``, then id), sorted by annotator."""
    latest: dict[str, Submission] = {}
    for submission in submissions:
        previous = latest.get(submission.annotator)
        if previous is not None:
            skips.add("older annotation by the same annotator on a task (the latest counts)")
            if (previous.updated_at, previous.annotation) > (submission.updated_at, submission.annotation):
                continue
        latest[submission.annotator] = submission
    return sorted(latest.values(), key=lambda s: s.annotator)


def collect_submissions(
    tasks: Iterable[Any], skips: Skips, *, include_ground_truth: bool = False
) -> dict[int, list[Submission]]:
    """The counted submissions of every task, by task id.

    Parameters
    ----------
    tasks : iterable of mapping
        Tasks as Label Studio gives them (``tasks.list`` with all fields, or
        a JSON export), each with its ``annotations``.
    skips : Skips
        Receives a count of everything left out, by reason.
    include_ground_truth : bool, default False
        Count annotations imported with the tasks, each as its own annotator
        ``gt:<id>``. Ground truth marked by a reviewer always counts, as its
        annotator's annotation.

    Returns
    -------
    dict of int to list of Submission
        Every task that was read, including those without counted
        annotations (an empty list), so their scores can be cleared.
    """
    out: dict[int, list[Submission]] = {}
    for task in tasks:
        identifier = task_id(task)
        if identifier is None:
            skips.add("task without an id")
            continue
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            skips.add("task whose annotations are not a list")
            annotations = []
        counted = (submission_of(a, identifier, skips, include_ground_truth=include_ground_truth)
                   for a in annotations)
        out[identifier] = latest_per_annotator((s for s in counted if s is not None), skips)
    return out
