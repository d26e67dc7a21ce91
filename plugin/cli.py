"""The ``ls-agreement`` command: one entry point, one sub-command per job."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from agreement.cli import add_compute_parser

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The full command-line parser."""
    parser = _Parser(
        prog="ls-agreement",
        description="Inter-annotator agreement for Label Studio: SPA, Krippendorff's alpha, the kappa family, "
                    "augmented kappa and P_I.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_compute_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ls-agreement`` with ``argv`` (default: the process arguments); return the exit status."""
    args = build_parser().parse_args(argv)
    return int(args.handler(args, sys.stdout, sys.stderr))


if __name__ == "__main__":
    sys.exit(main())
