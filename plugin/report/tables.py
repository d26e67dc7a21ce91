"""The admin report's tables, computed from a project's state (no I/O, no drawing).

Every number the page draws is in one of these tables, and ``--format csv``
or ``json`` writes exactly them, so what an admin sees and what a script
reads cannot differ.

It is past 600 lines because that promise needs one module: each table's
columns are named and ordered here once (the ``*_COLUMNS`` tuples), for the
page, the CSV and the JSON alike; split by table, the shared column rules
would be imported back and forth.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from agreement import UndefinedMeasureWarning, annotator_labels, label_counts
from agreement.alpha import coincidence_matrix
from agreement.confusion import set_coincidences, specific_agreement
from agreement.counts import LabelCounts
from agreement.family import ALL_LABELS, FAMILY_COLUMNS, agreement_family, undefined_notes, weighted_mean
from agreement.span_f1 import SpanF1, span_f1
from agreement.timeline import TIMELINE_COLUMNS, agreement_over_time, annotations_needed
from plugin.bugs import Bug, contained
from plugin.mapping import MappedControl
from plugin.mapping.choices import NONE, chosen_sets, is_label_set, split_label_items
from plugin.mapping.labelconfig import PASS_CONFIG, was_inferred
from plugin.mapping.span_units import span_units
from plugin.report.consensus import (
    CONSENSUS_COLUMNS,
    CONSENSUS_CONFUSION_COLUMNS,
    consensus_tables,
    task_consensus_columns,
)
from plugin.report.references import MODEL_COLUMNS, MODEL_CONFUSION_COLUMNS, REFERENCE_TABLE_COLUMNS, reference_tables
from plugin.settings import MappingOptions, ReportOptions
from plugin.state.flags import flag_rule
from plugin.state.project import ProjectScores, ProjectSnapshot
from plugin.state.scoring import ControlScore, is_wide, name_of
from plugin.state.spans import gamma_caveat, unitizing_caveat

__all__ = ["SPAN_MEASURES", "Report", "aligned_caveat", "build_report", "distinct_names", "span_caveats",
           "span_offsets", "span_unit"]

HEADLINE_COLUMNS = ("control", "tag", "level", "n_items", "n_annotations", "n_labels", "n_regions", "spa", "spa_low",
                    "spa_high", "alpha", "gwet", "gwet_coefficient", "annotations_needed")
TASK_COLUMNS = ("task", "n_annotations", "score", "flagged_by", "flagged_value", "mean_spa", "mean_alpha", "flagged",
                "reasons", "link")
TIMELINE_REPORT_COLUMNS = tuple("n_labels" if c == "n_annotations" else c for c in TIMELINE_COLUMNS)
SPAN_LABEL_COLUMNS = ("control", "label", "n_spans", "f1_exact", "f1_exact_sd", "f1_exact_pairs", "f1_overlap",
                      "f1_overlap_sd", "f1_overlap_pairs", "unitizing_alpha", "unitizing_observed",
                      "unitizing_expected")
SPAN_MEASURE_COLUMNS = ("control", "measure", "name", "value", "sd", "low", "high", "observed", "expected",
                        "n_pairs", "answers", "caveat", "n_continua", "lengths")
SPAN_PAIR_COLUMNS = ("control", "first", "second", "f1_exact", "tp_exact", "f1_overlap", "tp_overlap", "n_first",
                     "n_second")
SPAN_OFFSET_COLUMNS = ("control", "task", "scope", "label", "first", "second", "start_offset", "end_offset",
                       "unit")


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
        ``threshold``, ``flag_rule`` (the whole rule in words,
        :func:`plugin.state.flags.flag_rule`), ``target_width``.
    headline : DataFrame
        Per control: SPA with its interval, alpha, AC1/AC2, and the
        annotations still needed for an interval of ``target_width``;
        ``n_annotations`` (task and annotator pairs that answered the control,
        as everywhere), ``n_labels`` (the labels they gave over its items) and
        a span control's ``n_regions``.
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
        Per control and moment: SPA with its band, alpha, and ``n_labels``, the labels given up to then.
    tasks : DataFrame
        Every task's scores, flag, reasons and link, the flagged first in the
        review queue's order (:func:`plugin.state.flags.review_keys`: the
        lowest score, then the least certain consensus, then the fewest
        annotations). ``flagged_by`` is the control that flagged the task and
        ``flagged_value`` that control's value; ``mean_spa`` and ``mean_alpha``
        are the means over the task's controls. A span
        control adds its pairwise F1 on the task, exact (``f1``) and overlap
        (``f1_overlap``); with several span controls, ``f1:<control>`` and
        ``f1_overlap:<control>``.
    sweep : DataFrame
        Multiple choices: the augmented kappa at each p.
    span_labels : DataFrame
        Per span control and label: pairwise F1, exact and overlap, with its
        mean, population SD and number of annotator pairs, and unitizing alpha
        (1995/2004) with its disagreements; the row ``(all labels)`` holds the totals.
    span_measures : DataFrame
        Per span control, its measures side by side (:data:`SPAN_MEASURES`), each
        with the question it answers and ``caveat``, how to read it on the data at
        hand (empty where nothing needs saying: :func:`span_caveats`); ``n_continua`` and ``lengths`` (``"text"``,
        ``"media"`` or ``"extent"``: where the continua's lengths came from,
        which unitizing alpha and gamma depend on) repeat on each row.
    span_pairs : DataFrame
        Per span control and pair of annotators: pairwise F1 exact and overlap.
    span_offsets : DataFrame
        Per span control, one row per pair of spans matched by overlap: where
        the second annotator's start and end lie from the first's.
    references, models, model_confusion : DataFrame
        Against references (:func:`plugin.report.references.reference_tables`):
        each annotator against the ground truth and each model version, with
        intervals; each model version's mean kappa beside the annotators' own
        and its agreement with their majority; its labels against that majority.
    consensus, consensus_confusion : DataFrame
        Per categorical control (:func:`plugin.report.consensus.consensus_tables`): each annotator's accuracy as
        the fit estimates it beside their accuracy on ground truth (the ``references`` table's, over the same
        items); the confusion matrices of the least trusted. The tasks table
        then has ``consensus`` and ``posterior`` (``consensus:<control>``, ``posterior:<control>`` with several).
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
    span_labels: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(SPAN_LABEL_COLUMNS)))
    span_measures: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(SPAN_MEASURE_COLUMNS)))
    span_pairs: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(SPAN_PAIR_COLUMNS)))
    span_offsets: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(SPAN_OFFSET_COLUMNS)))
    references: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(REFERENCE_TABLE_COLUMNS)))
    models: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(MODEL_COLUMNS)))
    model_confusion: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(MODEL_CONFUSION_COLUMNS)))
    consensus: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(CONSENSUS_COLUMNS)))
    consensus_confusion: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(CONSENSUS_CONFUSION_COLUMNS)))
    options: ReportOptions = field(default_factory=ReportOptions)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The report's tables by name, in the page's order (what CSV and JSON write)."""
        return {"headline": self.headline, "family": self.family, "annotators": self.annotators,
                "pairwise": self.pairwise, "confusion": self.confusion, "timeline": self.timeline,
                "span_labels": self.span_labels, "span_measures": self.span_measures, "span_pairs": self.span_pairs,
                "span_offsets": self.span_offsets, "references": self.references, "models": self.models,
                "model_confusion": self.model_confusion, "consensus": self.consensus,
                "consensus_confusion": self.consensus_confusion, "tasks": self.tasks, "sweep": self.sweep,
                "notes": self.notes}


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _headline(name: str, score: ControlScore, options: ReportOptions) -> dict[str, Any]:
    low, high = score.spa_ci if score.spa_ci else (None, None)
    width = _nan(high) - _nan(low)
    gwet = score.gwet or {}
    return {"control": name, "tag": score.tag, "level": score.level, "n_items": score.n_pairable_items,
            "n_annotations": score.n_annotations, "n_labels": score.n_labels,
            "n_regions": score.spans["n_units"] if score.spans is not None else None, "spa": _nan(score.spa),
            "spa_low": _nan(low),
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


def _multiple_choice_family(labels: tuple[str, ...] | None, rows: pd.DataFrame, counts: LabelCounts,
                            choice: pd.Series) -> pd.DataFrame:
    """Rows of a multiple-choice control: one over every yes/no item, then one per choice.

    The control's row is over every yes/no item, then there is one row per choice over its own items
    (``choice``: each row's choice, :func:`plugin.mapping.choices.split_label_items`).

    A choice's R_i and specific agreement are those of "yes" on its items
    (how much more often than chance two annotators both ticked it).
    """
    categories = counts.categories
    whole = agreement_family(annotator_labels(rows, categories=categories), counts, per_label=False)
    whole["specific_agreement"] = math.nan
    parts = [whole]
    yes = list(categories).index("yes") if "yes" in list(categories) else None
    codes, choices = pd.factorize(choice)  # each row's choice as a code: a comparison of integers per choice
    for label in labels or sorted(choice.dropna().unique()):
        found = np.flatnonzero(choices == label)
        subset = rows[codes == (found[0] if len(found) else -2)]
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
        wide = is_wide(mapped)  # free text: no items x labels matrix (score_control's sparse path)
        counts = None if wide else mapped.label_counts()  # as the scores count them (from the codes)
        values = None if counts is None or mapped.level == "nominal" else counts.numeric_values()
        label_set = is_label_set(mapped)
        split = split_label_items(rows["item"], mapped.control.labels or None) if label_set else None
        chosen = chosen_sets(rows, mapped.control.labels or None, split=split) if split is not None else None
        labels = ([*(mapped.control.labels or sorted(set(chosen["label"]) - {NONE})),
                   *([NONE] if (chosen["label"] == NONE).any() else [])] if chosen is not None
                  else [str(c) for c in counts.categories] if counts is not None else [])
        n_labels = len(labels)
        if wide:
            family = _family_from_pairs(score)
            family["specific_agreement"] = math.nan
            notes.extend({"kind": "shown in part", "control": name, "message": note} for note in score.notes)
        elif len(rows) and n_labels <= options.max_categories:
            assert counts is not None  # not wide
            if label_set:
                assert split is not None  # a label set
                family = _multiple_choice_family(mapped.control.labels, rows, counts, split[1])
            else:
                family = agreement_family(annotator_labels(rows, categories=counts.categories), counts,
                                          level=mapped.level, values=values)  # type: ignore[arg-type]
                specific = score.label_agreement or {}
                family["specific_agreement"] = [math.nan if label == ALL_LABELS else _nan(specific.get(label))
                                                for label in family["label"]]
            # A label set's confusion is between its labels (which one annotator chose where another chose
            # which), not between "yes" and "no".
            o = set_coincidences(chosen, labels) if chosen is not None else coincidence_matrix(counts)
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
                                       level=level, values=values,
                                       categories=counts.categories if counts is not None else mapped.categories,
                                       n_resamples=options.timeline_resamples,
                                       confidence=snapshot.scoring.confidence, seed=snapshot.scoring.seed)
    for message in undefined_notes(caught):
        notes.append({"kind": "undefined", "control": name, "message": message})
    family.insert(0, "control", name)
    timeline = timeline.rename(columns={"n_annotations": "n_labels"})  # labels over items, not annotations
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


SPAN_MEASURES = (
    ("f1_exact", "pairwise F1, exact",
     ("How often two annotators mark the same entity with the same label and exactly the same boundaries "
     "(Hripcsak & Rothschild 2005); mean over annotator pairs.")),
    ("f1_overlap", "pairwise F1, overlap",
     ("How often two annotators mark the same entity with the same label, the boundaries overlapping by at least "
     "the Jaccard threshold; mean over annotator pairs.")),
    ("unitizing_alpha", "unitizing alpha (1995/2004)",
     ("Do annotators agree on which stretches carry which label, against chance (Krippendorff 2004, the form "
     "INCEpTION and DKPro report, built for two annotators).")),
    ("u_alpha", "u-alpha (2016)",
     ("Do annotators agree on where the units are and how they are labelled, against chance (Krippendorff, "
     "Mathet, Bouvry & Widlöcher 2016).")),
    ("binary_u_alpha", "|u-alpha",
     "Do annotators agree where the units are, whatever their labels?"),
    ("coding_u_alpha", "cu-alpha",
     "Given units overlap, do they get the same label?"),
    ("gamma", "gamma",
     ("Agreement on positions and labels together, with partial credit for near boundaries, against chance "
     "(Mathet, Widlöcher & Métivier 2015); the interval is that of the sampled expected disorder.")),
    ("spa", "SPA on aligned items",
     ("How often two annotators give an aligned span item the same label (\"no span\" included): the item agreement "
     "the rest of this report uses.")),
    ("alpha", "alpha on aligned items",
     "Krippendorff's alpha over the same aligned items: their agreement against chance."),
)
"""``(measure, name, question)`` of each row of a span control's :attr:`Report.span_measures`."""


def span_unit(mapped: MappedControl) -> str:
    """What a span control's positions count: characters, seconds, frames, or the time column's units."""
    control = mapped.control
    if control.tag == "timelinelabels":
        return "frames"
    if control.object_tag in ("audio", "audioplus", "video"):
        return "seconds"
    if control.object_tag == "timeseries" or control.tag == "timeserieslabels":
        return "time units"
    return "characters"


def span_offsets(mapped: MappedControl, *, jaccard: float, people: Mapping[str, str] | None = None,
                 overlap: SpanF1 | None = None) -> pd.DataFrame:
    """Where the boundaries of every pair of spans matched by overlap lie from each other.

    The spans are those the mapping keeps (``mapped.spans``), on the continua
    of :func:`plugin.mapping.span_units.span_units`; two spans of different
    annotators match as overlap F1 matches them
    (:func:`agreement.span_f1.span_f1` with ``match="overlap"``: same
    continuum and label, Jaccard at least ``jaccard``, one to one by an
    optimal assignment).

    Returns
    -------
    DataFrame
        One row per matched pair: ``control``, ``task``, ``scope`` (where in
        the task, as text; empty for the whole task), ``label``, ``first``,
        ``second`` (the annotators, named from ``people``; ``first`` sorts
        before ``second``), ``start_offset`` = second's start minus first's,
        ``end_offset`` likewise, and ``unit`` (:func:`span_unit`).

    ``overlap``: the overlap F1 already computed with ``jaccard`` on
    ``mapped.units`` (the project's scores hold it), whose matches are taken
    rather than matched again.
    """
    people = people or {}
    units = span_units(mapped, lengths=mapped.lengths)
    if overlap is not None and mapped.units is not None:
        matches = overlap.matches
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            matches = span_f1(units, match="overlap", jaccard=jaccard).matches
    first, second = matches[:, 0], matches[:, 1]
    docs = [units.docs[d] for d in units.doc[first]]
    names = [name_of(a, people) for a in units.annotators]
    return pd.DataFrame({
        "control": mapped.control.name, "task": [int(task) for task, _ in docs],
        "scope": [" ".join(str(part) for part in scope) for _, scope in docs],
        "label": [units.labels[code] for code in units.label[first]],
        "first": [names[code] for code in units.annotator[first]],
        "second": [names[code] for code in units.annotator[second]],
        "start_offset": units.start[second] - units.start[first], "end_offset": units.end[second] - units.end[first],
        "unit": span_unit(mapped)}, columns=list(SPAN_OFFSET_COLUMNS))


def _span_labels(name: str, mapped: MappedControl, spans: Mapping[str, Any]) -> pd.DataFrame:
    exact, overlap = spans["f1"]["exact"], spans["f1"]["overlap"]
    unitizing = spans["unitizing_alpha"]
    units = span_units(mapped, lengths=mapped.lengths)
    counts = {label: int(n) for label, n in zip(units.labels, np.bincount(units.label, minlength=len(units.labels)),
                                                strict=True)}
    labels = list(dict.fromkeys([*exact["per_label"], *unitizing["per_label"]]))
    rows = [{"label": ALL_LABELS, "n_spans": units.n_units, "f1_exact": exact["mean"],
             "f1_exact_sd": exact["sd"], "f1_exact_pairs": len(exact["pairs"]), "f1_overlap": overlap["mean"],
             "f1_overlap_sd": overlap["sd"], "f1_overlap_pairs": len(overlap["pairs"]),
             "unitizing_alpha": unitizing["value"], "unitizing_observed": unitizing["observed"],
             "unitizing_expected": unitizing["expected"]}]
    for label in labels:
        e, o = exact["per_label"].get(label, {}), overlap["per_label"].get(label, {})
        u = unitizing["per_label"].get(label, {})
        rows.append({"label": label, "n_spans": int(counts.get(label, 0)), "f1_exact": e.get("mean"),
                     "f1_exact_sd": e.get("sd"), "f1_exact_pairs": e.get("n_pairs", 0), "f1_overlap": o.get("mean"),
                     "f1_overlap_sd": o.get("sd"), "f1_overlap_pairs": o.get("n_pairs", 0),
                     "unitizing_alpha": u.get("value"), "unitizing_observed": u.get("observed"),
                     "unitizing_expected": u.get("expected")})
    frame = pd.DataFrame(rows, columns=list(SPAN_LABEL_COLUMNS)[1:])
    for column in frame.columns:
        if column not in ("label", "n_spans", "f1_exact_pairs", "f1_overlap_pairs"):
            frame[column] = frame[column].map(_nan).astype(float)
    frame.insert(0, "control", name)
    return frame


def aligned_caveat(mapping: MappingOptions) -> str:
    """What a span control's SPA and alpha on aligned items count as a disagreement, with the mapping's alignment.

    In two parts split by the first ``": "``: what a reader must know (the headline's card shows it), then why.

    >>> aligned_caveat(MappingOptions()).split(": ")[0]
    'on aligned items, a one-character boundary slip counts as a disagreement'
    """
    if mapping.span_alignment == "exact":
        return ("on aligned items, a one-character boundary slip counts as a disagreement: spans are one item only "
                "with the same start and end, so a slipped span makes two items, each \"no span\" for the other "
                "annotator; read overlap F1 and gamma for the spans")
    return ("on aligned items, a span one annotator marked and another did not counts as a disagreement: spans "
            f"overlapping by Jaccard >= {mapping.span_jaccard:g} are one item, and an annotator without a span there "
            "gives it \"no span\"; read overlap F1 and gamma for the spans")


def span_caveats(spans: Mapping[str, Any], mapping: MappingOptions) -> dict[str, str]:
    """How to read a span control's measures on the data at hand, by measure (:data:`SPAN_MEASURES`' keys).

    SPA and alpha on aligned items count boundaries as the alignment does (:func:`aligned_caveat`); the 1995/2004
    unitizing alpha is unreliable with more than two annotators on a continuum
    (:func:`plugin.state.spans.unitizing_caveat`); gamma may leave out tasks it cannot align
    (:func:`plugin.state.spans.gamma_caveat`).
    """
    out = {"spa": aligned_caveat(mapping), "alpha": aligned_caveat(mapping)}
    unitizing = unitizing_caveat(int(spans["unitizing_alpha"].get("most_annotators", 0)))
    if unitizing is not None:
        out["unitizing_alpha"] = unitizing
    left_out = gamma_caveat(int(spans["gamma"].get("n_unaligned_tasks", 0)))
    if left_out is not None:
        out["gamma"] = left_out
    return out


def _span_measures(name: str, score: ControlScore, spans: Mapping[str, Any], mapping: MappingOptions
                   ) -> pd.DataFrame:
    exact, overlap = spans["f1"]["exact"], spans["f1"]["overlap"]
    unitizing, family, gamma = spans["unitizing_alpha"], spans["u_alpha"], spans["gamma"]
    low, high = score.spa_ci if score.spa_ci else (None, None)
    values: dict[str, dict[str, Any]] = {
        "f1_exact": {"value": exact["mean"], "sd": exact["sd"], "n_pairs": len(exact["pairs"])},
        "f1_overlap": {"value": overlap["mean"], "sd": overlap["sd"], "n_pairs": len(overlap["pairs"])},
        "unitizing_alpha": {"value": unitizing["value"], "observed": unitizing["observed"],
                            "expected": unitizing["expected"]},
        "u_alpha": {"value": family["value"]}, "binary_u_alpha": {"value": family["binary"]},
        "coding_u_alpha": {"value": family["coding"]},
        "gamma": {"value": gamma["value"], "low": gamma["low"], "high": gamma["high"], "observed": gamma["observed"],
                  "expected": gamma["expected"]},
        "spa": {"value": score.spa, "low": low, "high": high}, "alpha": {"value": score.alpha},
    }
    caveats = span_caveats(spans, mapping)
    rows = []
    for key, title, question in SPAN_MEASURES:
        if key == "f1_overlap":
            title = f"{title} (Jaccard >= {overlap['jaccard']:g})"
        found = values[key]
        rows.append({"control": name, "measure": key, "name": title,
                     **{c: _nan(found.get(c)) for c in ("value", "sd", "low", "high", "observed", "expected")},
                     "n_pairs": found.get("n_pairs"), "answers": question, "caveat": caveats.get(key, ""),
                     "n_continua": spans["n_continua"], "lengths": spans["lengths"]})
    return pd.DataFrame(rows, columns=list(SPAN_MEASURE_COLUMNS))


def _span_pairs(name: str, spans: Mapping[str, Any], people: Mapping[str, str]) -> pd.DataFrame:
    overlap = {tuple(p["annotators"]): p for p in spans["f1"]["overlap"]["pairs"]}
    rows = []
    for pair in spans["f1"]["exact"]["pairs"]:
        other = overlap.get(tuple(pair["annotators"]), {})
        rows.append({"control": name, "first": name_of(pair["annotators"][0], people),
                     "second": name_of(pair["annotators"][1], people), "f1_exact": _nan(pair["f1"]),
                     "tp_exact": pair["tp"], "f1_overlap": _nan(other.get("f1")), "tp_overlap": other.get("tp"),
                     "n_first": pair["n_a"], "n_second": pair["n_b"]})
    return pd.DataFrame(rows, columns=list(SPAN_PAIR_COLUMNS))


def _span_tables(name: str, snapshot: ProjectSnapshot, score: ControlScore,
                 people: Mapping[str, str]) -> dict[str, pd.DataFrame]:
    """A span control's tables: per label, the measures side by side, per pair, and the matched boundaries."""
    spans = score.spans
    if spans is None:
        return {}
    mapped = snapshot.mapped[name]
    jaccard = float(spans["f1"]["overlap"]["jaccard"])
    held = snapshot.span_f1.get(name, {}).get("overlap") if jaccard == snapshot.mapping.span_jaccard else None
    return {"span_labels": _span_labels(name, mapped, spans),
            "span_measures": _span_measures(name, score, spans, snapshot.mapping),
            "span_pairs": _span_pairs(name, spans, people),
            "span_offsets": span_offsets(mapped, jaccard=jaccard, people=people, overlap=held)}


def _tasks(scores: ProjectScores, task_url: str | None) -> pd.DataFrame:
    span = [name for name, score in scores.controls.items() if score.spans is not None]
    f1 = {(name, key): key if len(span) == 1 else f"{key}:{name}" for name in span for key in ("f1", "f1_overlap")}
    tasks = scores.tasks  # read as columns: a task's words only where it is flagged
    ids = tasks.tasks.tolist()
    consensus = task_consensus_columns(tasks)
    columns = [*TASK_COLUMNS[:7], *f1.values(), *consensus, *TASK_COLUMNS[7:]]
    flagged_by, flagged_value = tasks.flagged_by()
    frame = pd.DataFrame({"task": tasks.tasks, "n_annotations": tasks.n_annotations, "score": tasks.score_values(),
                          "flagged_by": flagged_by, "flagged_value": flagged_value,
                          "mean_spa": tasks.spa, "mean_alpha": tasks.alpha,
                          **{column: tasks.span_column(name, key) for (name, key), column in f1.items()},
                          **consensus,
                          "flagged": tasks.flagged,
                          "reasons": tasks.reason_texts(),
                          "link": [task_url.format(task=task) for task in ids] if task_url else [None] * len(ids)},
                         columns=columns)
    order = np.lexsort((tasks.tasks, np.nan_to_num(tasks.review_keys(), nan=np.inf), ~tasks.flagged))
    return frame.iloc[order].reset_index(drop=True)  # the flagged first, in the review queue's order


def _concat(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def distinct_names(people: Mapping[str, str], annotators: Iterable[str]) -> dict[str, str]:
    """``people`` with a name for each of ``annotators`` that no other of them has.

    The report's tables and charts place annotators by name (a heatmap's rows, a confusion matrix each). Two
    annotators Label Studio names alike (a user known by id in one annotation and by email alone in another, two
    users of one name and no email) each get their id beside the name; an annotator named by their id keeps it.

    >>> distinct_names({"1": "ann@example.com", "2": "Bo"}, ["1", "ann@example.com", "2", "3"])
    {'1': 'ann@example.com (1)', '2': 'Bo', 'ann@example.com': 'ann@example.com', '3': '3'}
    """
    names = {annotator: name_of(annotator, people) for annotator in annotators}
    shared = Counter(names.values())
    return {**people, **{annotator: f"{name} ({annotator})" if shared[name] > 1 and name != annotator else name
                         for annotator, name in names.items()}}


def build_report(snapshot: ProjectSnapshot, *, source: str, generated_at: str, people: Mapping[str, str] | None = None,
                 task_url: str | None = None, options: ReportOptions | None = None,
                 title: str | None = None, scores: ProjectScores | None = None) -> Report:
    """The report of a project's state as it stands.

    Parameters
    ----------
    snapshot : ProjectSnapshot
        The project as last read (:meth:`plugin.state.project.ProjectState.snapshot`: the
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
    scores : ProjectScores, optional
        ``snapshot.scores()``, when the caller already computed them from this snapshot (computed here otherwise).
    """
    options = options or ReportOptions()
    people = distinct_names(people or {}, snapshot.annotators)  # tables and charts place annotators by name
    scores = snapshot.scores() if scores is None else scores
    times = snapshot.times
    notes: list[dict[str, str]] = []
    parts: dict[str, list[pd.DataFrame]] = {key: [] for key in
                                            ("family", "timeline", "annotators", "pairwise", "confusion", "sweep",
                                             "span_labels", "span_measures", "span_pairs", "span_offsets")}
    for name, score in scores.controls.items():
        tables = contained(lambda: {**_control_tables(name, snapshot, score, times, people, options, notes),
                                    **_span_tables(name, snapshot, score, people)},
                           where=f"drawing the report's tables of control {name!r}")
        if isinstance(tables, Bug):  # this control's tables alone are left out
            notes.append({"kind": "not shown", "control": name, "message": tables.reason()})
            continue
        for key, table in tables.items():
            parts[key].append(table)
    for name, reason in scores.not_scored.items():
        notes.append({"kind": "not scored", "control": name, "message": reason})
    for reason, count in scores.skips.reasons.most_common():
        notes.append({"kind": "skipped", "control": "", "message": f"{count} x {reason}"})
    for name, remarks in scores.config.items():
        notes.extend({"kind": "not scored", "control": name, "message": p} for p in remarks["problems"])
        notes.extend({"kind": "config", "control": name, "message": n} for n in remarks["notes"])
    if was_inferred(scores.config):
        notes.append({"kind": "config", "control": "", "message": PASS_CONFIG})
    for name, score in scores.controls.items():
        notes.extend({"kind": "undefined", "control": name, "message": message}
                     for message in (score.references or {}).get("notes", ()))
    tasks = _tasks(scores, task_url)
    against = reference_tables(scores.controls, people)
    trusted = consensus_tables(scores.controls, people)
    return Report(
        title=title or source, source=source, generated_at=generated_at, task_url=task_url, options=options,
        overview={"n_tasks": len(scores.tasks), "n_annotations": scores.n_annotations,
                  "n_annotators": len(scores.annotators), "flagged": int(tasks["flagged"].sum()),
                  "threshold": snapshot.scoring.threshold, "flag_rule": flag_rule(snapshot.scoring),
                  "target_width": options.target_width,
                  "min_gt_accuracy": snapshot.scoring.min_gt_accuracy,
                  "consensus_prior": list(snapshot.scoring.consensus_prior)},
        headline=pd.DataFrame([_headline(n, s, options) for n, s in scores.controls.items()],
                              columns=list(HEADLINE_COLUMNS)),
        family=_concat(parts["family"], ["control", *FAMILY_COLUMNS, "specific_agreement"]),
        annotators=_concat(parts["annotators"], ["control", "annotator", "name", "n_items", "n_compared",
                                                  "mean_pairwise", "with_majority", "outlier"]),
        pairwise=_concat(parts["pairwise"], ["control", "first", "second", "kappa", "n_items"]),
        confusion=_concat(parts["confusion"], ["control", "first", "second", "coincidences"]),
        timeline=_concat(parts["timeline"], ["control", *TIMELINE_REPORT_COLUMNS]),
        tasks=tasks,
        sweep=_concat(parts["sweep"], ["control", "p", "kappa"]),
        span_labels=_concat(parts["span_labels"], list(SPAN_LABEL_COLUMNS)),
        span_measures=_concat(parts["span_measures"], list(SPAN_MEASURE_COLUMNS)),
        span_pairs=_concat(parts["span_pairs"], list(SPAN_PAIR_COLUMNS)),
        span_offsets=_concat(parts["span_offsets"], list(SPAN_OFFSET_COLUMNS)),
        references=against["references"], models=against["models"], model_confusion=against["model_confusion"],
        consensus=trusted["consensus"], consensus_confusion=trusted["consensus_confusion"],
        notes=pd.DataFrame(notes, columns=["kind", "control", "message"]),
    )
