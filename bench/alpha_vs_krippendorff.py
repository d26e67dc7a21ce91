"""Benchmark: this package's alpha, SPA, Fleiss and Gwet's AC1/AC2 against the krippendorff package.

Runs both on the same count matrix (default 1,000,000 items x 5 categories,
3 annotations per item), as float64 and as int64 counts (what ``np.bincount``
and pandas give), checks that the values are equal, and prints the best-of-N
wall time, the peak memory each call allocates (tracemalloc; numpy reports its
buffers to it), and the speed ratio against krippendorff 0.9's
``value_counts`` path (given float counts, its fastest input).

    python bench/alpha_vs_krippendorff.py [--items N] [--categories C] [--repeat R]
"""

from __future__ import annotations

import argparse
import platform
import time
import tracemalloc
from collections.abc import Callable

import krippendorff
import numpy as np

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


def measure(function: Callable[[], float], repeat: int) -> tuple[float, float, float]:
    """Best wall time (s), peak traced memory (MiB) and the value of ``function()``."""
    tracemalloc.start()
    value = function()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best, peak / 2**20, float(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--categories", type=int, default=5)
    parser.add_argument("--per-item", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    counts = make_counts(args.items, args.categories, args.per_item, args.seed)
    values = np.arange(1.0, args.categories + 1)
    print(f"{args.items:,} items x {args.categories} categories, {args.per_item} annotations per item; "
          f"best of {args.repeat}; Python {platform.python_version()}, numpy {np.__version__}, "
          f"krippendorff {krippendorff.__version__ if hasattr(krippendorff, '__version__') else '0.9'}")
    print(f"{'measure':42s} {'seconds':>9s} {'peak MiB':>9s} {'value':>12s} {'speed-up':>9s}")

    peers = {}
    for level in ("nominal", "interval"):
        seconds, peak, value = measure(lambda level=level: krippendorff.alpha(
            value_counts=counts, level_of_measurement=level, value_domain=values), max(2, args.repeat // 3))
        peers[level] = (seconds, value)
        print(f"{'krippendorff ' + level:42s} {seconds:9.4f} {peak:9.1f} {value:12.8f} {'1.0x':>9s}")
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
        seconds, peak, value = measure(function, args.repeat)
        if peer is not None:
            peer_seconds, peer_value = peers[peer]
            if abs(value - peer_value) > 1e-9:
                raise SystemExit(f"{name}: {value!r} differs from krippendorff's {peer_value!r}.")
            ratio = f"{peer_seconds / seconds:.1f}x"
        else:
            ratio = f"{peers['nominal'][0] / seconds:.1f}x"
        print(f"{'this package ' + name:42s} {seconds:9.4f} {peak:9.1f} {value:12.8f} {ratio:>9s}")
    print("speed-up: krippendorff's time at the same level (nominal for the others) over this package's time.")


if __name__ == "__main__":
    main()
