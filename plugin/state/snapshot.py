"""What the report and the sync summary read.

That is a project's scores, and the snapshot they are scored from.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from agreement.gamma import ExpectedDisorder
from agreement.span_f1 import SpanF1
from plugin.bugs import Bug, contained
from plugin.mapping import MappedControl
from plugin.mapping.annotations import Skips
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.consensus import ConsensusFit
from plugin.state.references import (
    control_references,
)
from plugin.state.scoring import (
    ControlScore,
    score_control,
)
from plugin.state.task_scores import TaskScores

__all__ = ["ProjectScores", "ProjectSnapshot"]


@dataclass(frozen=True)
class ProjectScores:
    """Everything scored from a project's state at one moment (the sync summary and the report read this).

    Attributes
    ----------
    controls : dict of str to ControlScore
    tasks : TaskScores
    skips : Skips
    n_annotations : int
        Counted annotations over all tasks.
    annotators : tuple of str
    config : dict
        Per control with any: the ``problems`` that made it skipped, and ``notes``.
    not_scored : dict of str to str
        Per control that a bug kept from being scored, the reason (:meth:`plugin.bugs.Bug.reason`); it is in
        neither ``controls`` nor the tasks' scores, and every other control is.
    """

    controls: dict[str, ControlScore]
    tasks: TaskScores
    skips: Skips
    n_annotations: int
    annotators: tuple[str, ...]
    config: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    not_scored: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProjectSnapshot:
    """What the project's full scores are computed from, taken in one cheap step.

    Taking it costs O(annotations), with no scoring.

    The service takes it under the project's lock and scores it after
    releasing the lock, so events do not wait for the bootstrap.

    Attributes
    ----------
    mapped : dict of str to MappedControl
        Every task's rows, per control.
    tasks : TaskScores
    skips : Skips
    n_annotations : int
    annotators : tuple of str
    config : dict
    times : DataFrame
        ``task``, ``annotator`` and ``time`` (UTC) of every counted
        annotation (:meth:`ProjectState.annotation_times`).
    scoring : ScoringOptions
    mapping : MappingOptions
        Its ``span_jaccard`` is the Jaccard of overlap F1.
    expected : dict of str to ExpectedDisorder
        Per span-like control, gamma's expected disorder as sampled when
        every task was scored (so that it is sampled once per pass).
    observed : dict of str to float
        Per span-like control, gamma's observed disorder from every task's
        held best alignment (so that no task is aligned twice).
    unaligned : dict of str to int
        Per span-like control, the tasks that disorder leaves out (their spans
        overlap among too many annotators to align exactly).
    span_f1 : dict of str to dict
        Per span-like control whose tasks were all scored in one block when
        the snapshot was taken: per match, the pairwise F1 counts of every
        continuum (so that no span is matched twice).
    references : dict of str to tuple
        Per control with references, the rows mapped with them (see
        :attr:`ControlState.references`).
    reference_authors : dict of int to str
        Per task whose ground truth a reviewer marked, its author.
    consensus : dict of str to ConsensusFit
        Per categorical control, its consensus model as fit when every task was scored.
    not_scored : dict of str to str
        Per control that a bug kept from being scored, the reason; it is not in ``mapped``.
    """

    mapped: dict[str, MappedControl]
    tasks: TaskScores
    skips: Skips
    n_annotations: int
    annotators: tuple[str, ...]
    config: dict[str, dict[str, list[str]]]
    times: pd.DataFrame = field(compare=False)
    scoring: ScoringOptions
    mapping: MappingOptions = field(default_factory=MappingOptions)
    expected: dict[str, ExpectedDisorder] = field(default_factory=dict)
    observed: dict[str, float] = field(default_factory=dict)
    unaligned: dict[str, int] = field(default_factory=dict)
    span_f1: dict[str, dict[str, SpanF1]] = field(default_factory=dict, compare=False)
    references: dict[str, tuple[tuple[Any, ...], ...]] = field(default_factory=dict)
    reference_authors: dict[int, str] = field(default_factory=dict)
    consensus: dict[str, ConsensusFit] = field(default_factory=dict)
    not_scored: dict[str, str] = field(default_factory=dict)

    def reference_scores(self, name: str) -> dict[str, Any] | None:
        """The control's ``references`` block, None without any.

        See :func:`plugin.state.references.reference_block`.
        """
        mapped = self.mapped[name]
        return control_references(self.references.get(name, ()), self.reference_authors, level=mapped.level,
                                  categories=mapped.categories, scoring=self.scoring)

    def scores(self) -> ProjectScores:
        """The full project scores and every task's scores.

        The project scores are the kappa family, augmented kappa, per label, span measures and references.
        """
        controls, not_scored = {}, dict(self.not_scored)
        for name, mapped in self.mapped.items():
            score = contained(lambda: replace(
                score_control(mapped, self.scoring, span_jaccard=self.mapping.span_jaccard,
                              expected=self.expected.get(name), observed=self.observed.get(name),
                              unaligned=self.unaligned.get(name),
                              f1_counts=self.span_f1.get(name)),
                references=self.reference_scores(name), consensus=self.consensus.get(name)),
                where=f"scoring {mapped.control.describe()}")
            if isinstance(score, Bug):  # this control alone is not scored; every other one is
                not_scored[name] = score.reason()
            else:
                controls[name] = score
        return ProjectScores(controls=controls, tasks=self.tasks, skips=self.skips, n_annotations=self.n_annotations,
                             annotators=self.annotators, config=self.config, not_scored=not_scored)
