"""Benchmark: this package's alpha, SPA, Fleiss and Gwet's AC1/AC2 against the krippendorff package.

Runs both on the same count matrix (default 1,000,000 items x 5 categories,
3 annotations per item), as float64 and as int64 counts (what ``np.bincount``
and pandas give), checks that the values are equal, and prints the best-of-N
wall time, the peak memory each call allocates (tracemalloc; numpy reports its
buffers to it), and the speed ratio against krippendorff 0.9's
``value_counts`` path (given float counts, its fastest input).

With ``--busy`` every measurement is made twice: on the machine as it is
(quiet), then again while ``bench/busy.py`` keeps every core busy with one
pure-Python process each (busy); the speed-up is always against krippendorff
measured in the same condition. Under load the median says more than the best.

    python bench/alpha_vs_krippendorff.py [--items N] [--categories C] [--repeat R] [--busy [N]]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable

import krippendorff
import numpy as np
from busy import burners  # bench/busy.py, next to this script

from agreement import fleiss_kappa, gwet_ac, krippendorff_alpha, spa


def make_counts(n_items: int, n_categories: int, per_item: int, seed: int) -> np.ndarray:
    """Counts of ``per_item`` annotations per item, labels drawn with some agreement."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_categories, size=n_items)
    labels = np.where(rng.random((n_items, per_item)) < 0.6, truth[:, None],
                      rng.integers(0, n_categories, size=(n_items, per_item)))
    counts = np.zeros((n_items, n_categories))
    for column in labels.T:
        counts[np.arange(n_items), column] += 1
    return counts


def measure(function: Callable[[], float], repeat: int) -> tuple[float, float, float, float]:
    """Best and median wall time (s), peak traced memory (MiB) and the value of ``function()``."""
    tracemalloc.start()
    value = function()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), peak / 2**20, float(value)


def run(condition: str, counts: np.ndarray, values: np.ndarray, repeat: int) -> None:
    """Print one row per measure, krippendorff's first, each speed-up against krippendorff in this condition."""
    peers = {}
    for level in ("nominal", "interval"):
        best, median, peak, value = measure(lambda level=level: krippendorff.alpha(
            value_counts=counts, level_of_measurement=level, value_domain=values), max(2, repeat // 3))
        peers[level] = (best, median, value)
        print(f"{condition:6s} {'krippendorff ' + level:42s} {best:9.4f} {median:9.4f} {peak:9.1f} {value:12.8f} "
              f"{'1.0x':>9s} {'1.0x':>9s}")
    integers = counts.astype(np.int64)
    rows = []
    for kind, data in (("float", counts), ("int64", integers)):
        rows += [
            (f"alpha nominal ({kind})", "nominal", lambda data=data: krippendorff_alpha(data)),
            (f"alpha interval ({kind})", "interval",
             lambda data=data: krippendorff_alpha(data, level="interval", values=values)),
            (f"alpha ordinal ({kind})", None, lambda data=data: krippendorff_alpha(data, level="ordinal",
                                                                                   values=values)),
            (f"spa annotations_m1 ({kind})", None, lambda data=data: spa(data)),
            (f"fleiss ({kind})", None, lambda data=data: fleiss_kappa(data)),
            (f"gwet AC1 ({kind})", None, lambda data=data: gwet_ac(data).value),
            (f"gwet AC2 quadratic ({kind})", None,
             lambda data=data: gwet_ac(data, level="interval", values=values).value),
        ]
    for name, peer, function in rows:
        best, median, peak, value = measure(function, repeat)
        peer_best, peer_median, peer_value = peers[peer or "nominal"]
        if peer is not None and abs(value - peer_value) > 1e-9:
            raise SystemExit(f"{name}: {value!r} differs from krippendorff's {peer_value!r}.")
        print(f"{condition:6s} {'this package ' + name:42s} {best:9.4f} {median:9.4f} {peak:9.1f} {value:12.8f} "
              f"{peer_best / best:8.1f}x {peer_median / median:8.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--categories", type=int, default=5)
    parser.add_argument("--per-item", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--busy", type=int, nargs="?", const=os.cpu_count() or 1, default=None, metavar="N",
                        help="also measure with N CPU-burning processes running (default N: one per core, "
                             f"{os.cpu_count()})")
    args = parser.parse_args()

    counts = make_counts(args.items, args.categories, args.per_item, args.seed)
    values = np.arange(1.0, args.categories + 1)
    print(f"{args.items:,} items x {args.categories} categories, {args.per_item} annotations per item; "
          f"best and median of {args.repeat}; Python {platform.python_version()}, numpy {np.__version__}, "
          f"krippendorff {krippendorff.__version__ if hasattr(krippendorff, '__version__') else '0.9'}; "
          f"{os.cpu_count()} cores, load average {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(f"{'when':6s} {'measure':42s} {'best s':>9s} {'median s':>9s} {'peak MiB':>9s} {'value':>12s} "
          f"{'speed-up':>9s} {'(median)':>9s}")
    conditions = [("quiet", contextlib.nullcontext())]
    if args.busy is not None:
        conditions.append(("busy", burners(args.busy)))
    for condition, load in conditions:
        with load:
            run(condition, counts, values, args.repeat)
    print("speed-up: krippendorff's time at the same level (nominal for the others), in the same condition, over "
          "this package's time; busy: " + (f"{args.busy} CPU-burning processes running (bench/busy.py)"
                                           if args.busy is not None else "not measured (--busy)"))


if __name__ == "__main__":
    main()
