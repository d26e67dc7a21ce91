"""The admin report's tables, computed from a project's state (no I/O, no drawing).

Every number the page draws is in one of these tables, and ``--format csv``
or ``json`` writes exactly them, so what an admin sees and what a script
reads cannot differ.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from agreement import UndefinedMeasureWarning, annotator_labels, label_counts
from agreement.alpha import coincidence_matrix
from agreement.confusion import specific_agreement
from agreement.counts import LabelCounts
from agreement.family import ALL_LABELS, FAMILY_COLUMNS, agreement_family, undefined_notes, weighted_mean
from agreement.timeline import TIMELINE_COLUMNS, agreement_over_time, annotations_needed
from plugin.scoring import ControlScore, name_of
from plugin.settings import ReportOptions
from plugin.state import ProjectScores, ProjectSnapshot

__all__ = ["Report", "build_report"]

HEADLINE_COLUMNS = ("control", "tag", "level", "n_items", "n_annotations", "spa", "spa_low", "spa_high", "alpha",
                    "gwet", "gwet_coefficient", "annotations_needed")
TASK_COLUMNS = ("task", "n_annotations", "spa", "alpha", "flagged", "reasons", "link")


@dataclass(frozen=True)
class Report:
    """Everything the admin report shows, as tables.

    Attributes
    ----------
    title, source, generated_at : str
    task_url : str or None
        ``{task}`` in it gives a task's page in Label Studio (None offline).
    overview : dict
        ``n_tasks``, ``n_annotations``, ``n_annotators``, ``flagged``,
        ``threshold``, ``target_width``.
    headline : DataFrame
        Per control: SPA with its interval, alpha, AC1/AC2, and the
        annotations still needed for an interval of ``target_width``.
    family : DataFrame
        Per control and label: kappa_Co, kappa_S&C, PABAK, P_I, R_i, alpha,
        SPA (:func:`agreement.family.agreement_family`), and each label's
        specific agreement.
    annotators : DataFrame
        Per control and annotator: name, items, mean pairwise kappa,
        agreement with the majority of the others, outlier.
    pairwise : DataFrame
        Per control and pair of annotators: Cohen's kappa and shared items.
    confusion : DataFrame
        Per control and pair of labels: Krippendorff's coincidences.
    timeline : DataFrame
        Per control and moment: SPA with its band, alpha.
    tasks : DataFrame
        Every task's scores, flag, reasons and link, worst first.
    sweep : DataFrame
        Multiple choices: the augmented kappa at each p.
    notes : DataFrame
        ``kind``, ``control``, ``message``: what was skipped or undefined, and why.
    """

    title: str
    source: str
    generated_at: str
    task_url: str | None
    overview: dict[str, Any]
    headline: pd.DataFrame
    family: pd.DataFrame
    annotators: pd.DataFrame
    pairwise: pd.DataFrame
    confusion: pd.DataFrame
    timeline: pd.DataFrame
    tasks: pd.DataFrame
    sweep: pd.DataFrame
    notes: pd.DataFrame
    options: ReportOptions = field(default_factory=ReportOptions)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The report's tables by name, in the page's order (what CSV and JSON write)."""
        return {"headline": self.headline, "family": self.family, "annotators": self.annotators,
                "pairwise": self.pairwise, "confusion": self.confusion, "timeline": self.timeline,
                "tasks": self.tasks, "sweep": self.sweep, "notes": self.notes}


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _annotation_times(snapshot: ProjectSnapshot) -> pd.DataFrame:
    """``task``, ``annotator``, ``time`` (UTC) of every counted annotation."""
    frame = pd.DataFrame(list(snapshot.created), columns=["task", "annotator", "created_at"])
    frame["time"] = pd.to_datetime(frame["created_at"], utc=True, errors="coerce", format="ISO8601")
    return frame.drop(columns="created_at")


def _headline(name: str, score: ControlScore, options: ReportOptions) -> dict[str, Any]:
    low, high = score.spa_ci if score.spa_ci else (None, None)
    width = _nan(high) - _nan(low)
    gwet = score.gwet or {}
    return {"control": name, "tag": score.tag, "level": score.level, "n_items": score.n_pairable_items,
            "n_annotations": score.n_annotations, "spa": _nan(score.spa), "spa_low": _nan(low),
            "spa_high": _nan(high), "alpha": _nan(score.alpha), "gwet": _nan(gwet.get("value")),
            "gwet_coefficient": gwet.get("coefficient"),
            "annotations_needed": annotations_needed(width, n_annotations=score.n_annotations,
                                                     target=options.target_width)}


def _family_from_pairs(score: ControlScore) -> pd.DataFrame:
    """The control's row when its labels are too many for per-label tables: the pairs' measures averaged."""
    weights = np.array([p["n_items"] for p in score.pairs], dtype=float)

    def mean(key: str) -> float:
        return weighted_mean(np.array([_nan(p.get(key)) for p in score.pairs]), weights)

    row = {"label": ALL_LABELS, "n_items": score.n_pairable_items, "kappa_co": mean("cohen"),
           "kappa_sc": _nan(score.fleiss), "pabak": mean("pabak"), "p_i": math.nan, "r_i": math.nan,
           "alpha": _nan(score.alpha), "spa": _nan(score.spa)}
    return pd.DataFrame([row], columns=list(FAMILY_COLUMNS))


def _multiple_choice_family(labels: tuple[str, ...] | None, rows: pd.DataFrame, counts: LabelCounts) -> pd.DataFrame:
    """Multiple choices: the control's row over every yes/no item, then one row per choice over its own items.

    A choice's R_i and specific agreement are those of "yes" on its items
    (how much more often than chance two annotators both ticked it).
    """
    categories = counts.categories
    whole = agreement_family(annotator_labels(rows, categories=categories), counts, per_label=False)
    whole["specific_agreement"] = math.nan
    choice = rows["item"].astype(str).str.split(":", n=1).str[1]
    parts = [whole]
    yes = list(categories).index("yes") if "yes" in list(categories) else None
    for label in labels or sorted(choice.dropna().unique()):
        subset = rows[choice == label]
        if subset.empty:
            continue
        sub_counts = label_counts(subset, categories=categories)
        family = agreement_family(annotator_labels(subset, categories=categories), sub_counts)
        row = family.iloc[[0]].copy()
        row["label"] = str(label)
        row["r_i"] = family["r_i"].iloc[1 + yes] if yes is not None else math.nan
        row["specific_agreement"] = specific_agreement(sub_counts)[yes] if yes is not None else math.nan
        parts.append(row)
    return pd.concat(parts, ignore_index=True)


def _control_tables(name: str, snapshot: ProjectSnapshot, score: ControlScore, times: pd.DataFrame,
                    people: Mapping[str, str], options: ReportOptions, notes: list[dict[str, str]]
                    ) -> dict[str, pd.DataFrame]:
    mapped = snapshot.mapped[name]
    rows = mapped.rows
    out: dict[str, pd.DataFrame] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMeasureWarning)
        counts = label_counts(rows, categories=mapped.categories)
        values = None if mapped.level == "nominal" else counts.numeric_values()
        n_labels = counts.counts.shape[1]
        if len(rows) and n_labels <= options.max_categories:
            if mapped.ranked_records is not None:
                family = _multiple_choice_family(mapped.control.labels, rows, counts)
            else:
                family = agreement_family(annotator_labels(rows, categories=counts.categories), counts,
                                          level=mapped.level, values=values)  # type: ignore[arg-type]
                specific = score.label_agreement or {}
                family["specific_agreement"] = [math.nan if label == ALL_LABELS else _nan(specific.get(label))
                                                for label in family["label"]]
            o = coincidence_matrix(counts)
            labels = [str(c) for c in counts.categories]
            first, second = np.meshgrid(np.arange(n_labels), np.arange(n_labels), indexing="ij")
            out["confusion"] = pd.DataFrame({"control": name, "first": np.array(labels, dtype=object)[first.ravel()],
                                             "second": np.array(labels, dtype=object)[second.ravel()],
                                             "coincidences": o.ravel()})
        else:
            family = _family_from_pairs(score) if len(rows) else pd.DataFrame(columns=list(FAMILY_COLUMNS))
            family["specific_agreement"] = math.nan
            if n_labels > options.max_categories:
                notes.append({"kind": "shown in part", "control": name,
                              "message": f"{n_labels} distinct labels: per-label rows and the confusion matrix "
                                         f"are drawn for controls with at most {options.max_categories}."})
        timed = rows.merge(times, on=["task", "annotator"], how="left")
        untimed = int(timed["time"].isna().sum())
        if untimed:
            notes.append({"kind": "left out of the timeline", "control": name,
                          "message": f"{untimed} annotations without a creation time."})
        level: Any = mapped.level
        timeline = agreement_over_time(timed[timed["time"].notna()], points=options.timeline_points,
                                       level=level, values=values, categories=counts.categories,
                                       n_resamples=options.timeline_resamples,
                                       confidence=snapshot.scoring.confidence, seed=snapshot.scoring.seed)
    for message in undefined_notes(caught):
        notes.append({"kind": "undefined", "control": name, "message": message})
    family.insert(0, "control", name)
    timeline.insert(0, "control", name)
    out["family"] = family
    out["timeline"] = timeline
    out["annotators"] = pd.DataFrame([{"control": name, "annotator": row["annotator"],
                                       "name": name_of(row["annotator"], people), "n_items": row["n_items"],
                                       "n_compared": row["n_compared"], "mean_pairwise": _nan(row["mean_pairwise"]),
                                       "with_majority": _nan(row["with_majority"]), "outlier": row["outlier"]}
                                      for row in score.annotators])
    out["pairwise"] = pd.DataFrame([{"control": name, "first": name_of(p["annotators"][0], people),
                                     "second": name_of(p["annotators"][1], people), "kappa": _nan(p["cohen"]),
                                     "n_items": p["n_items"]} for p in score.pairs])
    if score.augmented is not None:
        out["sweep"] = pd.DataFrame([{"control": name, "p": float(p), "kappa": _nan(v)}
                                     for p, v in score.augmented["kappa"].items()])
    return out


def _tasks(scores: ProjectScores, task_url: str | None) -> pd.DataFrame:
    rows = [{"task": t.task, "n_annotations": t.n_annotations, "spa": _nan(t.spa), "alpha": _nan(t.alpha),
             "flagged": t.flagged, "reasons": "; ".join(t.reasons),
             "link": task_url.format(task=t.task) if task_url else None} for t in scores.tasks.values()]
    frame = pd.DataFrame(rows, columns=list(TASK_COLUMNS))
    return frame.sort_values(["flagged", "spa", "task"], ascending=[False, True, True], na_position="last",
                             kind="stable").reset_index(drop=True)


def _concat(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def build_report(snapshot: ProjectSnapshot, *, source: str, generated_at: str, people: Mapping[str, str] | None = None,
                 task_url: str | None = None, options: ReportOptions | None = None,
                 title: str | None = None) -> Report:
    """The report of a project's state as it stands.

    Parameters
    ----------
    snapshot : ProjectSnapshot
        The project as last read (:meth:`plugin.state.ProjectState.snapshot`: the
        caller holds the state's lock while taking it, and not after).
    source : str
        Where the tasks came from, as the page says it.
    generated_at : str
    people : mapping of str to str, optional
        Annotator id -> name and email.
    task_url : str, optional
        A task's page in Label Studio, with ``{task}`` for its id.
    options : ReportOptions, optional
    title : str, optional
    """
    options = options or ReportOptions()
    people = people or {}
    scores = snapshot.scores()
    times = _annotation_times(snapshot)
    notes: list[dict[str, str]] = []
    parts: dict[str, list[pd.DataFrame]] = {key: [] for key in
                                            ("family", "timeline", "annotators", "pairwise", "confusion", "sweep")}
    for name, score in scores.controls.items():
        for key, table in _control_tables(name, snapshot, score, times, people, options, notes).items():
            parts[key].append(table)
    for reason, count in scores.skips.reasons.most_common():
        notes.append({"kind": "skipped", "control": "", "message": f"{count} x {reason}"})
    for name, remarks in scores.config.items():
        notes.extend({"kind": "not scored", "control": name, "message": p} for p in remarks["problems"])
        notes.extend({"kind": "config", "control": name, "message": n} for n in remarks["notes"])
    tasks = _tasks(scores, task_url)
    return Report(
        title=title or source, source=source, generated_at=generated_at, task_url=task_url, options=options,
        overview={"n_tasks": len(scores.tasks), "n_annotations": scores.n_annotations,
                  "n_annotators": len(scores.annotators), "flagged": int(tasks["flagged"].sum()),
                  "threshold": snapshot.scoring.threshold, "target_width": options.target_width},
        headline=pd.DataFrame([_headline(n, s, options) for n, s in scores.controls.items()],
                              columns=list(HEADLINE_COLUMNS)),
        family=_concat(parts["family"], ["control", *FAMILY_COLUMNS, "specific_agreement"]),
        annotators=_concat(parts["annotators"], ["control", "annotator", "name", "n_items", "n_compared",
                                                  "mean_pairwise", "with_majority", "outlier"]),
        pairwise=_concat(parts["pairwise"], ["control", "first", "second", "kappa", "n_items"]),
        confusion=_concat(parts["confusion"], ["control", "first", "second", "coincidences"]),
        timeline=_concat(parts["timeline"], ["control", *TIMELINE_COLUMNS]),
        tasks=tasks,
        sweep=_concat(parts["sweep"], ["control", "p", "kappa"]),
        notes=pd.DataFrame(notes, columns=["kind", "control", "message"]),
    )
