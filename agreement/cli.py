"""``ls-agreement compute``: one agreement measure of a CSV of annotations.

The CSV has one row per annotation with the columns ``item``, ``annotator``
and ``label`` (and ``rank``, 1 for primary and 2 for secondary, for the
augmented kappa). Bad input ends with exit status 2 and one line on stderr
saying what is wrong; a measure that is undefined for the data prints
``null`` (with ``--json``) and a warning that says why.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, cast

import numpy as np
import pandas as pd

from agreement.alpha import LEVELS, LevelName, krippendorff_alpha
from agreement.augmented import augmented_kappa, augmented_sweep, classify_items, ranked_labels
from agreement.bootstrap import ConfidenceInterval, bootstrap_ci
from agreement.counts import label_counts
from agreement.gwet import gwet_ac
from agreement.information import information_agreement
from agreement.kappa import cohen_kappa, fleiss_kappa, kappa_report
from agreement.pairwise import annotator_labels
from agreement.spa import WEIGHING_SCHEMES, WeighingScheme, spa
from agreement.undefined import UndefinedMeasureWarning

__all__ = ["ComputeOptions", "InputError", "add_compute_parser", "read_annotations", "run_compute"]

METRICS: dict[str, str] = {
    "alpha": "Krippendorff's alpha (--level)",
    "spa": "Sparse Probability of Agreement (Norregaard and Derczynski; --weights)",
    "fleiss": "Fleiss' kappa",
    "gwet": "Gwet's AC1 (nominal) or AC2 (--level)",
    "cohen": "Cohen's kappa, two annotators (--kappa-weights for weighted kappa)",
    "scott": "Scott's pi, two annotators",
    "pabak": "PABAK, 2P(A) - 1, two annotators",
    "information": "Klemens' P_I, the information in agreement, two annotators (--metric pi too: P_I, not Scott's "
                   "pi, which is scott)",
    "augmented": "the augmented kappa of ranked labels, two annotators (--p; a rank column)",
}
"""Each measure ``--metric`` takes, with what it is (``pi``, an older name of ``information``, is taken too)."""
ALIASES = {"pi": "information"}
TWO_RATER = ("cohen", "scott", "pabak", "information", "augmented")

_SNIFF_BYTES = 65_536


class InputError(Exception):
    """Input the command cannot use; its message is one line for the user."""


@dataclass(frozen=True)
class ComputeOptions:
    """Everything ``compute`` was asked, read once from the command line."""

    path: Path
    metric: str
    level: LevelName = "nominal"
    weights: WeighingScheme = "annotations_m1"
    p: float = 0.5
    confidence: float | None = None
    n_resamples: int = 1000
    seed: int | None = None
    as_json: bool = False
    kappa_weights: str | None = None

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> ComputeOptions:
        """Validate parsed arguments; raises :class:`InputError`."""
        if not 0.5 <= args.p <= 1.0:
            raise InputError(f"--p must lie between 0.5 and 1 (the primary label's weight); got {args.p}.")
        if args.ci is not None and not 0.0 < args.ci < 1.0:
            raise InputError(f"--ci must lie strictly between 0 and 1, e.g. 0.95; got {args.ci}.")
        if args.bootstrap is not None and args.bootstrap < 2:
            raise InputError(f"--bootstrap needs at least 2 resamples; got {args.bootstrap}.")
        metric = ALIASES.get(args.metric, args.metric)
        if args.kappa_weights is not None and metric != "cohen":
            raise InputError("--kappa-weights applies to --metric cohen only.")
        if args.bootstrap is not None and args.ci is None:
            raise InputError("--bootstrap sets the resamples of the interval --ci asks for; give --ci too "
                             "(e.g. --ci 0.95).")
        return cls(path=Path(args.file), metric=metric, level=cast(LevelName, args.level),
                   weights=cast(WeighingScheme, args.weights), p=args.p,
                   confidence=args.ci, n_resamples=1000 if args.bootstrap is None else args.bootstrap, seed=args.seed, as_json=args.json,
                   kappa_weights=args.kappa_weights)


@contextmanager
def _refused_as_input() -> Iterator[None]:
    """A table the measure refuses (a rank of 7, an item labeled twice by one annotator) as the file's mistake.

    Only around the call that reads the CSV's rows into the measure's table; any other error is a bug.
    """
    try:
        yield
    except ValueError as error:
        raise InputError(str(error)) from None


def add_compute_parser(subparsers: Any) -> None:
    """Register ``compute`` on an argparse sub-parser collection."""
    parser = subparsers.add_parser(
        "compute",
        help="compute one agreement measure from a CSV of annotations",
        description="Compute an agreement measure from a CSV with columns item,annotator,label (and rank for "
                    "augmented: 1 primary, 2 secondary).",
    )
    parser.add_argument("file", help="CSV file, one row per annotation")
    parser.add_argument("--metric", required=True, choices=[*METRICS, *ALIASES], metavar="METRIC",
                        help="the measure: " + "; ".join(f"{name}: {what}" for name, what in METRICS.items()))
    parser.add_argument("--level", default="nominal", choices=LEVELS,
                        help="level of measurement: alpha's distance, gwet's weights (AC1 nominal, else AC2)")
    parser.add_argument("--kappa-weights", default=None, choices=("linear", "quadratic"),
                        help="cohen: weighted kappa (Cohen 1968) over the labels' numeric order")
    parser.add_argument("--weights", default="annotations_m1", choices=WEIGHING_SCHEMES, help="SPA weighing scheme")
    parser.add_argument("--p", type=float, default=0.5, help="augmented kappa: weight of the primary label, 0.5-1")
    parser.add_argument("--ci", type=float, default=None, metavar="LEVEL", help="bootstrap interval, e.g. 0.95")
    parser.add_argument("--bootstrap", type=int, default=None, metavar="N",
                        help="with --ci: bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=None, help="random seed of the bootstrap")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    try:
        options = ComputeOptions.from_namespace(args)
        return run_compute(options, stdout=stdout, stderr=stderr)
    except InputError as error:
        print(f"ls-agreement compute: error: {error}", file=stderr)
        return 2


def read_annotations(path: Path, *, columns: tuple[str, ...]) -> tuple[pd.DataFrame, int]:
    """Read the CSV; return its rows with all ``columns`` filled, and how many rows were skipped.

    Raises
    ------
    InputError
        For a missing, empty, binary or unparsable file, missing columns, or
        no usable rows.
    """
    if not path.exists():
        raise InputError(f"{path} does not exist.")
    if path.is_dir():
        raise InputError(f"{path} is a directory, not a CSV file.")
    with path.open("rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    if not head.strip():
        raise InputError(f"{path} is empty.")
    if b"\x00" in head:
        raise InputError(f"{path} is not a text CSV file (it holds binary data).")
    try:
        with warnings.catch_warnings():
            # pandas takes a first row one field longer than the header as holding an index: an error here
            warnings.simplefilter("error", pd.errors.ParserWarning)
            table = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""], skipinitialspace=True,
                                index_col=False)
    except pd.errors.ParserWarning:
        with path.open(newline="", encoding="utf-8", errors="replace") as handle:
            header, first = next(csv.reader(handle), []), next(csv.reader(handle), [])
        raise InputError(f"{path} is not a valid CSV file: line 2 has {len(first)} fields where the header has "
                         f"{len(header)}.") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text.") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        text = str(error).strip().splitlines()[0]
        fields = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
        if fields:
            text = f"line {fields[2]} has {fields[3]} fields where the header has {fields[1]}."
        raise InputError(f"{path} is not a valid CSV file: {text}") from None
    table.columns = [str(c).strip() for c in table.columns]
    missing = [c for c in columns if c not in table.columns]
    if missing:
        have = ", ".join(table.columns) or "none"
        hint = ""
        if len(table.columns) == 1 and ";" in table.columns[0]:
            hint = " It looks separated by semicolons: save it with commas (a spreadsheet's CSV, comma-delimited)."
        raise InputError(f"{path} has no column {', '.join(map(repr, missing))}; its columns are: {have}.{hint}")
    table = table[list(columns)]
    usable = table.notna().all(axis=1)
    if not usable.any():
        raise InputError(f"{path} has no row with all of: {', '.join(columns)}.")
    return table[usable].reset_index(drop=True), int((~usable).sum())


def _numeric_labels(table: pd.DataFrame, level: str, path: Path) -> pd.DataFrame:
    numbers = pd.to_numeric(table["label"], errors="coerce")
    if numbers.isna().any():
        bad = table["label"][numbers.isna()].iloc[0]
        raise InputError(f"The {level} level needs numeric labels, but {path} has the label {bad!r}.")
    return table.assign(label=numbers.to_numpy(dtype=np.float64))


def _finite(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _interval(ci: ConfidenceInterval, seed: int | None) -> dict[str, Any]:
    return {"low": _finite(ci.low), "high": _finite(ci.high), "confidence": ci.confidence,
            "standard_error": _finite(ci.standard_error), "n_resamples": ci.n_resamples,
            "n_undefined": ci.n_undefined, "seed": seed}


def _interval_of(data: Any, measure: str, options: ComputeOptions, values: Any = None) -> dict[str, Any]:
    ci = bootstrap_ci(data, measure, n_resamples=options.n_resamples, confidence=options.confidence or 0.95,
                      seed=options.seed, level=options.level, weights=options.weights, values=values)
    return _interval(ci, options.seed)


def _gwet(table: pd.DataFrame, options: ComputeOptions) -> dict[str, Any]:
    """Gwet's AC1 (nominal) or AC2 (other levels), with the analytic interval.

    Computed from the per-item label counts.
    """
    if options.level != "nominal":
        table = _numeric_labels(table, options.level, options.path)
    with _refused_as_input():  # the CSV's rows as the measure reads them: what it refuses is the file's
        counts = label_counts(table)
    values = None if options.level == "nominal" else counts.numeric_values()
    estimate = gwet_ac(counts, level=options.level, values=values, confidence=options.confidence or 0.95)
    result: dict[str, Any] = {
        "n_pairable_items": int((counts.counts.sum(axis=1) >= 2).sum()), "level": options.level,
        "coefficient": "AC1" if options.level == "nominal" else "AC2", "value": estimate.value,
        "observed": estimate.observed, "expected": estimate.expected, "standard_error": estimate.std_error,
    }
    if options.confidence is not None:
        result["ci"] = {**_interval_of(counts, "gwet", options, values), "analytic": {
            "low": _finite(estimate.low), "high": _finite(estimate.high), "standard_error":
            _finite(estimate.std_error), "confidence": options.confidence}}
    return result


def _item_level(table: pd.DataFrame, options: ComputeOptions) -> dict[str, Any]:
    """alpha, spa and fleiss, from the per-item label counts."""
    if options.metric == "alpha" and options.level != "nominal":
        table = _numeric_labels(table, options.level, options.path)
    with _refused_as_input():  # the CSV's rows as the measure reads them: what it refuses is the file's
        counts = label_counts(table)
    result: dict[str, Any] = {"n_pairable_items": int((counts.counts.sum(axis=1) >= 2).sum())}
    if options.metric == "alpha":
        result.update(level=options.level, value=krippendorff_alpha(counts, level=options.level))
    elif options.metric == "spa":
        result.update(weights=options.weights, value=spa(counts, weights=options.weights))
    else:
        result.update(value=fleiss_kappa(counts))
    if options.confidence is not None:
        result["ci"] = _interval_of(counts, options.metric, options)
    return result


def _augmented(table: pd.DataFrame, options: ComputeOptions) -> dict[str, Any]:
    """The augmented kappa of two annotators, its sweep over p and the item classes."""
    with _refused_as_input():  # the CSV's rows as the measure reads them: what it refuses is the file's
        ranked = ranked_labels(table)
    both = ranked.rated(0) & ranked.rated(1)
    first, second = ranked.matrix(0, p=options.p)[both], ranked.matrix(1, p=options.p)[both]
    kappa = augmented_kappa(first, second)
    classes = classify_items(ranked)["item_class"].value_counts()
    result: dict[str, Any] = {
        "p": options.p, "value": kappa.kappa, "observed": kappa.observed, "expected": kappa.expected,
        "n_common_items": kappa.n_items,
        "sweep": {f"{p:.1f}": _finite(v) for p, v in augmented_sweep(ranked).items()},
        "item_classes": {str(name): int(count) for name, count in classes.items()},
    }
    if options.confidence is not None:
        result["ci"] = _interval_of(np.hstack([first, second]), "augmented", options)
    return result


def _two_rater(table: pd.DataFrame, options: ComputeOptions) -> dict[str, Any]:
    """cohen, scott, pabak and pi, from the two annotators' contingency table."""
    with _refused_as_input():  # the CSV's rows as the measure reads them: what it refuses is the file's
        labels = annotator_labels(table)
    pair = labels.table(0, 1)
    result: dict[str, Any] = {"n_common_items": int(pair.sum())}
    if options.metric == "information":
        info = information_agreement(pair)
        result.update(value=info.p_i, information=info.information, entropy_first=info.entropy_first,
                      entropy_second=info.entropy_second,
                      ratios={str(c): _finite(r) for c, r in zip(labels.categories, info.ratios, strict=True)})
    else:
        report = kappa_report(pair)
        result.update(value=getattr(report, options.metric), observed=report.observed, cohen=report.cohen,
                      scott=report.scott, pabak=report.pabak, prevalence=report.prevalence, bias=report.bias)
    if options.kappa_weights is not None:
        numeric = pd.to_numeric(pd.Series(labels.categories), errors="coerce")
        if numeric.isna().any():
            raise InputError(f"--kappa-weights needs numeric labels, but {options.path} has the label "
                             f"{labels.categories[int(numeric.isna().to_numpy().argmax())]!r}.")
        result.update(kappa_weights=options.kappa_weights,
                      value=cohen_kappa(pair, weights=options.kappa_weights, values=numeric.to_numpy(dtype=float)))
        if options.confidence is not None:
            raise InputError("--ci is not available for weighted kappa; use the unweighted kappa's interval.")
    if options.confidence is not None:
        result["ci"] = _interval_of(pair, options.metric, options)
    return result


def _compute(options: ComputeOptions) -> dict[str, Any]:
    columns = (("item", "annotator", "label", "rank") if options.metric == "augmented"
               else ("item", "annotator", "label"))
    table, skipped = read_annotations(options.path, columns=columns)
    annotators = sorted(table["annotator"].unique())
    if options.metric in TWO_RATER and len(annotators) != 2:
        shown = ", ".join(annotators[:5]) + (", ..." if len(annotators) > 5 else "")
        raise InputError(
            f"The {options.metric} metric compares exactly two annotators; {options.path} has "
            f"{len(annotators)} ({shown})."
        )
    annotations = table[["item", "annotator"]].drop_duplicates() if options.metric == "augmented" else table
    result: dict[str, Any] = {
        "metric": options.metric,
        "n_items": int(table["item"].nunique()),
        "n_annotations": len(annotations),
        "n_annotators": len(annotators),
        "skipped_rows": skipped,
    }
    if options.metric in ("alpha", "spa", "fleiss"):
        return {**result, **_item_level(table, options)}
    if options.metric == "gwet":
        return {**result, **_gwet(table, options)}
    if options.metric == "augmented":
        return {**result, **_augmented(table, options)}
    return {**result, **_two_rater(table, options)}


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (float, np.floating)):
        return _finite(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return value


def run_compute(options: ComputeOptions, *, stdout: TextIO = sys.stdout, stderr: TextIO = sys.stderr) -> int:
    """Compute, print the result, and return the exit status (0, or 2 for bad input)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMeasureWarning)
        result = _compute(options)
    messages = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UndefinedMeasureWarning)))
    if result["skipped_rows"]:
        columns = "item, annotator, label" + (", rank" if options.metric == "augmented" else "")
        rows = "1 row" if result["skipped_rows"] == 1 else f"{result['skipped_rows']} rows"
        print(f"ls-agreement compute: warning: skipped {rows} without all of {columns}.", file=stderr)
    for message in messages:
        print(f"ls-agreement compute: warning: {message}", file=stderr)
    result = _clean({**result, "warnings": messages})
    if options.as_json:
        print(json.dumps(result), file=stdout)
        return 0
    value = "undefined" if result["value"] is None else f"{result['value']:.3f}"  # as the report shows scores
    qualifier = (f" ({result['level']})" if "level" in result
                 else f" ({result['weights']})" if "weights" in result else "")
    name = f"{result['metric']}{qualifier}"
    if "kappa_weights" in result:
        name = f"weighted kappa ({result['kappa_weights']})"
    line = (f"{name} = {value} over {result['n_items']} items and "
            f"{result['n_annotations']} annotations")
    if "ci" in result and result["ci"]["low"] is not None:
        ci = result["ci"]
        line += f"; {ci['confidence']:.0%} interval [{ci['low']:.3f}, {ci['high']:.3f}]"
    print(line, file=stdout)
    return 0
