"""Benchmark: Gwet's AC1 and AC2 against irrCAC, the packages that define them in practice.

irrCAC pins an old toolchain and cannot share this project's environment, so it runs in a Python of its own, given
with ``--peer-python`` (``python3 -m venv /tmp/irrcac-venv && /tmp/irrcac-venv/bin/pip install irrCAC==0.4.4``). The
same ratings (N items x 3 raters, 5 categories, labels drawn with some agreement) are written to a temporary file,
both sides compute AC1 and AC2 (quadratic weights), the values are compared, and the best-of-R wall times printed
with their ratio. irrCAC reads raters x items ratings; this package reads the per-item counts, whose making is timed
apart (``np.bincount``).

    python bench/gwet_vs_irrcac.py [--items 1000000] [--peer-python /tmp/irrcac-venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from agreement import gwet_ac

PEER = """
import json, sys, time
import numpy as np, pandas as pd
from irrCAC.raw import CAC
ratings = np.load(sys.argv[1])
frame = pd.DataFrame(ratings.astype(float), columns=[f"r{i}" for i in range(ratings.shape[1])])
out = {}
for weights in ("identity", "quadratic"):
    best = float("inf")
    for _ in range(int(sys.argv[2])):
        start = time.perf_counter()
        value = CAC(frame, weights=weights, categories=[1.0, 2.0, 3.0, 4.0, 5.0]).gwet()["est"]["coefficient_value"]
        best = min(best, time.perf_counter() - start)
    out[weights] = [best, value]
print(json.dumps(out))
"""


def best_of(function, repeat: int) -> tuple[float, float]:
    value, best = function(), float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--peer-repeat", type=int, default=1)
    parser.add_argument("--peer-python", help="a Python with irrCAC installed (else only this package runs)")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, size=args.items)
    ratings = np.where(rng.random((args.items, 3)) < 0.6, truth[:, None], rng.integers(1, 6, size=(args.items, 3)))
    started = time.perf_counter()
    counts = np.stack([np.bincount(np.repeat(np.arange(args.items), 3)[ratings.ravel() == c],
                                   minlength=args.items) for c in range(1, 6)], axis=1)
    print(f"{args.items:,} items x 3 raters, 5 categories; counts made in {time.perf_counter() - started:.3f} s "
          f"({counts.dtype})")
    values = np.arange(1.0, 6.0)
    ours = {"identity": best_of(lambda: gwet_ac(counts).value, args.repeat),
            "quadratic": best_of(lambda: gwet_ac(counts, level="interval", values=values).value, args.repeat)}
    peer = None
    if args.peer_python:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "ratings.npy"
            np.save(path, ratings)
            done = subprocess.run([args.peer_python, "-c", PEER, str(path), str(args.peer_repeat)], check=True,
                                  capture_output=True, text=True)
            peer = json.loads(done.stdout)
    for weights, name in (("identity", "AC1"), ("quadratic", "AC2 quadratic")):
        seconds, value = ours[weights]
        line = f"{name:14s} this package {seconds:8.4f} s  value {value:.5f}"
        if peer is not None:
            peer_seconds, peer_value = peer[weights]
            if abs(value - peer_value) > 1e-5:  # irrCAC rounds to 5 decimals
                raise SystemExit(f"{name}: {value!r} differs from irrCAC's {peer_value!r}.")
            line += f" | irrCAC {peer_seconds:8.2f} s  value {peer_value:.5f} | speed-up {peer_seconds / seconds:,.0f}x"
        print(line)


if __name__ == "__main__":
    main()
