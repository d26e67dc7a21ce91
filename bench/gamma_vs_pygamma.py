"""Gamma here against pygamma-agreement on the same documents: time and values side by side; and a task's live cost.

    python bench/gamma_vs_pygamma.py [--pygamma-python .venv-peers/pygamma/bin/python] [--timeout 300]

Documents: synthetic ones of growing size (annotators who mark the same entities with jittered boundaries, some
misses and some label changes), and, when tests/data/bratiaa/export.json exists (bratiaa's example project as a
Label Studio export: 4 annotators, 7 CoNLL-2002 Spanish documents), its 7 documents. For each: the best-alignment
disorder and gamma (30 sampled continua) here and in pygamma-agreement, which runs from its own venv through a
subprocess (it needs cvxpy and GLPK; see tests/data/pygamma_reference.py), each pygamma document under a timeout.

Then the per-event cost of one task's gamma in projects of 100, 1,000 and 10,000 tasks: a task's gamma is its own
best-alignment disorder against the project's expected disorder, which is sampled once per pass from at most
``max_docs`` continua, so neither cost grows with the project.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from agreement.gamma import expected_disorder, gamma, observed_disorder, task_gamma
from agreement.units import units_from_frame

ROOT = Path(__file__).resolve().parents[1]
N_SAMPLES = 30

# Runs inside pygamma-agreement's venv: reads the documents, writes disorder, gamma and their times to a file
# (GLPK logs to the standard output).
PYGAMMA = """
import json, logging, sys, time
import numpy as np
import pygamma_agreement as pa
from pyannote.core import Segment
logging.disable(logging.WARNING)
doc = json.load(open(sys.argv[1]))
c = pa.Continuum()
for annotator, start, end, label in doc["units"]:
    c.add(annotator, Segment(start, end), label)
d = pa.CombinedCategoricalDissimilarity(alpha=1.0, beta=1.0, delta_empty=1.0)
warm = pa.Continuum()  # numba compiles on the first alignment: not counted
for annotator, start, end in (("a", 0, 2), ("b", 1, 2), ("c", 0, 1)):
    warm.add(annotator, Segment(start, end), "x")
warm.get_best_alignment(d)
t0 = time.perf_counter()
observed = float(c.get_best_alignment(d).disorder)
t1 = time.perf_counter()
json.dump({"observed": observed, "observed_s": t1 - t0}, open(sys.argv[2], "w"))  # kept if gamma times out
np.random.seed(doc["seed"])
result = c.compute_gamma(d, n_samples=doc["n_samples"])
t2 = time.perf_counter()
json.dump({"observed": observed, "observed_s": t1 - t0, "gamma": float(result.gamma),
           "expected": float(result.expected_disorder), "gamma_s": t2 - t1}, open(sys.argv[2], "w"))
"""


def synthetic(rng: np.random.Generator, n_annotators: int, n_entities: int, doc: str) -> pd.DataFrame:
    """Annotators marking the same entities with jittered boundaries, 10% misses and 15% other labels."""
    starts = np.cumsum(rng.integers(3, 40, size=n_entities)).astype(float)
    lengths = rng.integers(2, 15, size=n_entities).astype(float)
    labels = rng.choice(["PER", "LOC", "ORG", "MISC"], size=n_entities)
    rows = []
    for a in range(n_annotators):
        keep = rng.random(n_entities) >= 0.10
        s = np.maximum(starts + rng.integers(-2, 3, size=n_entities), 0)
        e = np.maximum(starts + lengths + rng.integers(-2, 3, size=n_entities), s + 1)
        lab = np.where(rng.random(n_entities) < 0.15, rng.choice(["PER", "LOC", "ORG", "MISC"], size=n_entities),
                       labels)
        rows += [(doc, f"A{a}", str(lab[i]), float(s[i]), float(e[i])) for i in np.flatnonzero(keep)]
    return pd.DataFrame(rows, columns=["doc", "annotator", "label", "start", "end"])


def bratiaa(path: Path) -> list[pd.DataFrame]:
    """bratiaa's example project, one frame per document."""
    rows = []
    for task in json.loads(path.read_text()):
        for annotation in task["annotations"]:
            for result in annotation["result"]:
                value = result["value"]
                rows.append((f"bratiaa-{task['id']}", annotation.get("completed_by_name", str(annotation["completed_by"])),
                             value["labels"][0], float(value["start"]), float(value["end"])))
    frame = pd.DataFrame(rows, columns=["doc", "annotator", "label", "start", "end"])
    return [frame[frame["doc"] == doc] for doc in frame["doc"].unique()]


def ours(frame: pd.DataFrame, seed: int) -> dict:
    units = units_from_frame(frame)
    t0 = time.perf_counter()
    observed = observed_disorder(units).value
    t1 = time.perf_counter()
    result = gamma(units, n_samples=N_SAMPLES, seed=seed)
    t2 = time.perf_counter()
    return {"observed": observed, "observed_s": t1 - t0, "gamma": result.value, "low": result.low,
            "high": result.high, "expected": result.expected, "gamma_s": t2 - t1}


def theirs(frame: pd.DataFrame, python: str, seed: int, timeout: float) -> dict | None:
    units = [[r.annotator, r.start, r.end, r.label] for r in frame.itertuples()]
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "doc.json", Path(tmp) / "out.json"
        source.write_text(json.dumps({"units": units, "seed": seed, "n_samples": N_SAMPLES}))
        try:
            subprocess.run([python, "-c", PYGAMMA, str(source), str(target)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=timeout, check=True)
        except subprocess.TimeoutExpired:
            pass  # the best alignment may have been written before gamma ran out of time
        return json.loads(target.read_text()) if target.exists() else None


def compare(documents: list[pd.DataFrame], python: str | None, timeout: float, seed: int) -> None:
    print(f"{'document':<16}{'ann':>4}{'units':>6} | {'D_o here':>10}{'pygamma':>10}{'|diff|':>9} | "
          f"{'gamma here [interval]':>26}{'pygamma':>9} | {'s here':>7}{'pygamma':>9}{'ratio':>8} "
          f"| {'D_o s here':>10}{'pygamma':>9}{'ratio':>8}")
    for frame in documents:
        a = ours(frame, seed)
        b = theirs(frame, python, seed, timeout) if python else None
        head = f"{frame['doc'].iloc[0]:<16}{frame['annotator'].nunique():>4}{len(frame):>6} | {a['observed']:>10.6f}"
        interval = f"{a['gamma']:.4f} [{a['low']:.4f}, {a['high']:.4f}]"
        if b is None:
            print(f"{head}{'-':>10}{'-':>9} | {interval:>26}{'-':>9} | {a['gamma_s']:>7.3f}"
                  f"{'>' + format(timeout, '.0f') if python else '-':>9}{'-':>8} | {a['observed_s']:>10.3f}")
            continue
        if "gamma" in b:
            their_gamma = f"{b['gamma']:>9.4f} | {a['gamma_s']:>7.3f}{b['gamma_s']:>9.2f}"
            their_gamma += f"{b['gamma_s'] / a['gamma_s']:>7.0f}x"
        else:
            their_gamma = f"{'-':>9} | {a['gamma_s']:>7.3f}{'>' + format(timeout, '.0f'):>9}{'-':>8}"
        print(f"{head}{b['observed']:>10.6f}{abs(a['observed'] - b['observed']):>9.1e} | {interval:>26}"
              f"{their_gamma} | {a['observed_s']:>10.4f}{b['observed_s']:>9.3f}"
              f"{b['observed_s'] / a['observed_s']:>7.0f}x", flush=True)


def per_event(sizes: tuple[int, ...], seed: int) -> None:
    """The cost of one task's gamma when an annotation arrives, and of the project's D_e, at growing sizes."""
    rng = np.random.default_rng(seed)
    print(f"\n{'tasks':>7}{'units':>9} | {'D_e s (per pass)':>17} | {'task gamma ms/event':>20}{'(median of 200)':>17}")
    for n_tasks in sizes:
        frame = pd.concat([synthetic(rng, 3, 6, f"t{i}") for i in range(n_tasks)], ignore_index=True)
        units = units_from_frame(frame)
        t0 = time.perf_counter()
        expected = expected_disorder(units, n_samples=N_SAMPLES, seed=seed).value
        de_s = time.perf_counter() - t0
        by_task = dict(tuple(frame.groupby("doc", sort=False)))
        picks = rng.choice(list(by_task), size=200)
        times = []
        for doc in picks:
            t0 = time.perf_counter()
            task_gamma(units_from_frame(by_task[doc]), expected)  # the event: one task's units, read afresh
            times.append(time.perf_counter() - t0)
        print(f"{n_tasks:>7}{len(frame):>9} | {de_s:>17.3f} | {1000 * np.median(times):>20.2f}"
              f"{f'(p90 {1000 * np.quantile(times, 0.9):.2f})':>17}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pygamma-python", default=".venv-peers/pygamma/bin/python",
                        help="the python of a venv with pygamma-agreement (skipped when absent)")
    parser.add_argument("--bratiaa", type=Path, default=ROOT / "tests" / "data" / "bratiaa" / "export.json")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for pygamma on one document")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-pygamma-above", type=int, default=10**9,
                        help="do not run pygamma on documents with more units than this")
    parser.add_argument("--only", nargs="*", default=None, help="run these documents only (e.g. bratiaa-1)")
    parser.add_argument("--no-events", action="store_true", help="skip the per-event costs")
    args = parser.parse_args()
    python = args.pygamma_python if Path(args.pygamma_python).exists() else None
    rng = np.random.default_rng(args.seed)
    documents = bratiaa(args.bratiaa) if args.bratiaa.exists() else []
    documents += [synthetic(rng, n_annotators, n_entities, f"syn-{n_annotators}x{n_entities}")
                 for n_annotators, n_entities in ((2, 10), (2, 50), (2, 200), (3, 10), (3, 30), (3, 60), (4, 10),
                                                  (4, 25), (4, 50))]
    if not args.bratiaa.exists():
        print(f"({args.bratiaa} not found: bratiaa's documents skipped)")
    if args.only is not None:
        documents = [d for d in documents if d["doc"].iloc[0] in args.only]
    print(f"gamma with {N_SAMPLES} sampled continua, seed {args.seed}; pygamma: {python or 'not installed'}\n")
    small = [d for d in documents if len(d) <= args.skip_pygamma_above]
    large = [d for d in documents if len(d) > args.skip_pygamma_above]
    compare(small, python, args.timeout, args.seed)
    if large:
        compare(large, None, args.timeout, args.seed)
    if not args.no_events:
        per_event((100, 1_000, 10_000), args.seed)


if __name__ == "__main__":
    main()
