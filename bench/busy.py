"""Keep every core busy while a command runs: a load generator for measurements on shared machines.

Starts N processes (default: one per core, ``os.cpu_count()``) that each burn a core in a pure-Python loop, runs
the command, then stops them. Each burner also stops by itself after ``--seconds`` (default 600) and as soon as
the process that started it is gone, so none outlives a measurement even when this one is killed.

    python bench/busy.py [--processes N] [--seconds S] -- COMMAND [ARG ...]

From Python (``bench/alpha_vs_krippendorff.py --busy``)::

    with burners():
        ...  # measured with every core busy
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["burners", "main"]

# A burner: count in pure Python until the deadline, or until its parent is gone (then it is re-parented and
# os.getppid() changes); the checks come every 100,000 additions, a few milliseconds apart.
_BURN = """
import os, sys, time
end = time.monotonic() + float(sys.argv[1])
parent = int(sys.argv[2])
count = 0
while time.monotonic() < end and os.getppid() == parent:
    for _ in range(100_000):
        count += 1
"""

_SETTLE = 0.3
"""Seconds given to the burners to start before the command runs."""


@contextmanager
def burners(processes: int | None = None, *, seconds: float = 600.0) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``processes`` CPU-burning processes (default: one per core) for the duration of the ``with`` block.

    They are stopped when the block ends, and stop by themselves after ``seconds``.
    """
    count = (os.cpu_count() or 1) if processes is None else processes
    if count < 0 or not seconds > 0:
        raise ValueError(f"Burners need a count of at least 0 and seconds above 0; got {count} and {seconds}.")
    started: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            started.append(subprocess.Popen([sys.executable, "-c", _BURN, str(seconds), str(os.getpid())],
                                            stdin=subprocess.DEVNULL))
        time.sleep(_SETTLE if started else 0.0)
        yield started
    finally:
        for process in started:
            if process.poll() is None:
                process.terminate()
        for process in started:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", "-n", type=int, default=None,
                        help=f"CPU-burning processes (default: os.cpu_count(), here {os.cpu_count()})")
    parser.add_argument("--seconds", type=float, default=600.0,
                        help="the most seconds the burners run; they stop then even if the command has not (600)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run while the cores are busy")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run, after --")
    with burners(args.processes, seconds=args.seconds):
        return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
