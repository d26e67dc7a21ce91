"""The ``ls-agreement`` command: one entry point, one sub-command per job.

Settings are read here, once, from the environment and the flags, into the
frozen dataclasses of :mod:`plugin.settings`, and passed down.

It is past 600 lines because it is the one place that turns flags into settings for every sub-command (sync,
serve, report, demo, compute): the parsers and their option groups, shared between sub-commands, are most of it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from agreement.cli import add_compute_parser
from plugin import __version__
from plugin.bugs import EX_SOFTWARE, InputError, keep_bug
from plugin.logs import LOG_FORMATS, LOG_LEVELS, configure_logging
from plugin.settings import (
    CONSENSUS_METHODS,
    FLAG_ON,
    SPAN_FLAG_ON,
    Connection,
    MappingOptions,
    ReviewOptions,
    ScoringOptions,
    SettingsError,
    connection_from,
)

if TYPE_CHECKING:
    from plugin.keeper.passes import Progress
    from plugin.labelstudio.export import Export
    from plugin.mapping.labelconfig import Control
    from plugin.settings import ProjectOptions

__all__ = ["build_parser", "main"]

_Commands = argparse._SubParsersAction  # the type add_subparsers() returns (argparse names it only privately)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_sync_parser(commands: _Commands) -> None:
    parser = commands.add_parser(
        "sync",
        help="score every task of a Label Studio project and write the scores into task meta",
        description="Read a project (or a JSON export), score agreement per task and control, and write each "
                    "task's scores into meta['agreement']. Only tasks whose scores changed are written.",
    )
    _add_source_options(parser, export="a Label Studio JSON export file, scored offline (no writes)")
    _add_connection_options(parser)
    _add_scoring_options(parser)
    _add_review_options(parser)
    saved = parser.add_argument_group("saved state")
    saved.add_argument("--state-dir", type=Path, metavar="DIR",
                       help="restore the project's state saved here by the last sync (or by serve) and read only "
                            "the tasks changed since, then save it again; signed with $AGREEMENT_WEBHOOK_SECRET "
                            "(default: none, every task is read)")
    saved.add_argument("--full-read", action="store_true",
                       help="with --state-dir, read every task anyway and save the state again (now and then, e.g. "
                            "weekly, as serve does every --full-pass-every passes)")
    output = parser.add_argument_group("output")
    output.add_argument("--dry-run", action="store_true", help="compute and report, write nothing")
    output.add_argument("--json", action="store_true", help="print one JSON object")
    output.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(handler=_run_sync)


def _add_source_options(parser: argparse.ArgumentParser, *, export: str) -> None:
    source = parser.add_argument_group("source")
    source.add_argument("--project", type=int, help="Label Studio project id")
    source.add_argument("--export", type=Path, help=export)
    source.add_argument("--label-config", type=Path, help="labeling config XML for --export (else inferred)")


def _read_export(args: argparse.Namespace) -> tuple[Export | None, dict[str, Control] | None]:
    """The tasks of ``--export`` and their controls; None and None for ``--project``.

    The tasks are read as a stream when iterated. The controls come from ``--label-config``, else are inferred
    from the results.

    Raises
    ------
    SettingsError
        If not exactly one of ``--project`` and ``--export`` is given.
    """
    from plugin.labelstudio.export import open_export

    if (args.project is None) == (args.export is None):
        raise SettingsError("Give either --project ID (a live project) or --export FILE (offline).")
    if args.export is None:
        return None, None
    return open_export(args.export, label_config=args.label_config.read_text() if args.label_config else None)


def _add_connection_options(parser: argparse.ArgumentParser, *, writes: bool = True) -> None:
    """The options that reach Label Studio; ``writes`` False for a command that writes nothing there (report)."""
    group = parser.add_argument_group("Label Studio")
    group.add_argument("--url", help="Label Studio URL (default: $LABEL_STUDIO_URL)")
    group.add_argument("--api-key", help="legacy token or personal access token (default: $LABEL_STUDIO_API_KEY)")
    group.add_argument("--page-size", type=int, default=None, help="tasks per page when reading (default 500)")
    if writes:
        group.add_argument("--writers", type=int, default=None, help="meta updates sent at once (default 4)")
    group.add_argument("--timeout", type=float, default=None, help="seconds to wait for each request (default 30)")


def _connection(args: argparse.Namespace) -> Connection:
    """The connection settings: the flags, else the environment (read here, once)."""
    return connection_from(os.environ, url=args.url, api_key=args.api_key, page_size=args.page_size,
                           writers=getattr(args, "writers", None), timeout=args.timeout)


def _add_scoring_options(parser: argparse.ArgumentParser) -> None:
    options = parser.add_argument_group("scoring")
    options.add_argument("--settings", type=Path, metavar="FILE",
                         help="per-project settings, TOML or YAML: defaults at the top, a section per project; they "
                              "win over the flags (serve: also $AGREEMENT_SETTINGS, read again when it changes)")
    options.add_argument("--threshold", type=float, default=0.5,
                         help="flag a task with two annotations or more when any control's agreement on it is "
                              "below this (0.5); that is the whole rule unless --flag-on, --flag-lowest-decile or "
                              "--flag-constant-low adds another")
    options.add_argument("--control-threshold", action="append", default=[], metavar="NAME=VALUE",
                         help="a control's own threshold in place of --threshold, repeatable (e.g. "
                              "--control-threshold quality=0.7)")
    options.add_argument("--flag-lowest-decile", action="store_true",
                         help="also flag the tasks whose score is below the project's 10th percentile (the cut "
                              "moves at each pass)")
    options.add_argument("--flag-constant-low", action="store_true",
                         help="also flag a task whose multiple-choice control is 'constant low' (Rosenberg & "
                              "Binkowski 2004): its annotators disagree on most labels whichever they chose first, "
                              "even where its agreement passes the threshold")
    options.add_argument("--absent-span", choices=("label", "missing"), default="label",
                         help='an annotator who marked nothing at a span gives "no span" (label) or nothing')
    options.add_argument("--span-alignment", choices=("exact", "overlap"), default="exact")
    options.add_argument("--span-jaccard", type=float, default=0.5, help="least overlap for --span-alignment overlap")
    options.add_argument("--box-iou", type=float, default=0.5, help="least IoU for two boxes to match")
    options.add_argument("--polygon-iou", type=float, default=0.5,
                         help="least IoU for two polygons, vectors or ellipses to match")
    options.add_argument("--mask-iou", type=float, default=0.5, help="least IoU for two brush masks to match")
    options.add_argument("--mask-size", type=int, default=512,
                         help="masks are compared reduced to at most this many pixels a side (512)")
    options.add_argument("--keypoint-distance", type=float, default=0.02,
                         help="most distance for two keypoints to match, as a share of the image diagonal")
    options.add_argument("--video-iou", type=float, default=0.5,
                         help="least mean box IoU over frames for two video tracks to match")
    options.add_argument("--interval-jaccard", type=float, default=0.5,
                         help="least overlap for two audio, time series or timeline regions to match")
    options.add_argument("--include-ground-truth", action="store_true",
                         help="count annotations imported with the tasks (ground truth) as their own annotator")
    options.add_argument("--seed", type=int, default=0, help="bootstrap seed of the project intervals")
    options.add_argument("--span-flag-on", choices=SPAN_FLAG_ON, default="f1-overlap",
                         help="which per-task value of a span control is compared with its threshold: pairwise F1 "
                              "with overlap matching at --span-jaccard (default), exact F1, the agreement over "
                              "aligned items, or gamma")
    options.add_argument("--gamma-alpha", type=float, default=1.0, help="gamma's positional weight (1)")
    options.add_argument("--gamma-beta", type=float, default=1.0, help="gamma's categorical weight (1)")
    options.add_argument("--gamma-empty", type=float, default=1.0, help="gamma's cost of an unaligned unit (1)")
    options.add_argument("--gamma-samples", type=int, default=30,
                         help="sampled corpora behind gamma's expected disorder (30)")
    options.add_argument("--gamma-seed", type=int, default=0, help="seed of gamma's sampling (0)")
    options.add_argument("--consensus", choices=CONSENSUS_METHODS, default="dawid-skene",
                         help="how each task's consensus label is found in a categorical control: Dawid-Skene "
                              "(default; weighs each annotator by their estimated confusion), majority vote, or off")
    options.add_argument("--consensus-prior", type=_pseudo_counts, default=(2.0, 1.0), metavar="A,B",
                         help="Dawid-Skene's pseudo-counts on the diagonal of each annotator's confusion and "
                              "shared among the cells off it, a prior that keeps an annotator seen on a few items "
                              "from being certain (2,1; A at least B; 0,0 is maximum likelihood)")
    options.add_argument("--flag-on", choices=FLAG_ON, default="agreement",
                         help="flag a task on its agreement (default: below the threshold), on an uncertain "
                              "consensus (posterior below --min-posterior; the threshold then flags nothing), or both")
    options.add_argument("--min-posterior", type=float, default=0.9,
                         help="the least consensus posterior --flag-on posterior accepts (0.9)")
    options.add_argument("--min-gt-accuracy", type=float, default=None, metavar="VALUE",
                         help="name the annotators whose accuracy against the ground truth is below VALUE (sync and "
                              "serve also list their tasks in a Data Manager tab)")
    options.add_argument("--min-gt-items", type=int, default=10,
                         help="the least ground-truth items an annotator needs before --min-gt-accuracy judges "
                              "them (10)")


def _add_review_options(parser: argparse.ArgumentParser) -> None:
    review = parser.add_argument_group("review in Label Studio")
    review.add_argument("--no-tab", action="store_true",
                        help='do not keep the "Low agreement" tab in the Data Manager')
    review.add_argument("--mirror-to-data", action="store_true",
                        help="also write each task's score into data['agreement_score'], a column the tab sorts "
                             "on (changes the task's data as exported)")
    review.add_argument("--escalate", action="store_true",
                        help="ask for one more annotator on a flagged task whose annotations are in: raise its "
                             "overlap by one, so Label Studio's queue serves it again")
    review.add_argument("--consensus-predictions", action="store_true",
                        help="keep a prediction of model version 'consensus' on each task with its consensus labels "
                             "(Choices, Rating, Taxonomy), so reviewers see them in the labeling view and accept "
                             "them in one click")
    review.add_argument("--max-overlap", type=int, default=5,
                        help="the most annotators --escalate asks for on one task (5)")


def _pseudo_counts(text: str) -> tuple[float, float]:
    """``A,B``: two pseudo-counts (checked by :class:`ScoringOptions`)."""
    parts = text.split(",")
    try:
        if len(parts) == 2:
            return float(parts[0]), float(parts[1])
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"takes two numbers A,B, as 2,1; got {text!r}")


def _options(args: argparse.Namespace) -> tuple[MappingOptions, ScoringOptions]:
    """The mapping and scoring settings of the flags (each checks itself: :class:`SettingsError`)."""
    thresholds = {}
    for given in args.control_threshold:
        name, _, value = given.partition("=")
        try:
            thresholds[name] = float(value)
        except ValueError:
            name = ""
        if not name:
            raise SettingsError(f"--control-threshold takes NAME=VALUE with a value between 0 and 1; got {given!r}.")
    mapping = MappingOptions(absent_span=args.absent_span, span_alignment=args.span_alignment,
                             span_jaccard=args.span_jaccard, box_iou=args.box_iou, polygon_iou=args.polygon_iou,
                             mask_iou=args.mask_iou, mask_size=args.mask_size,
                             keypoint_distance=args.keypoint_distance, video_iou=args.video_iou,
                             interval_jaccard=args.interval_jaccard, include_ground_truth=args.include_ground_truth)
    return mapping, ScoringOptions(threshold=args.threshold, thresholds=thresholds, seed=args.seed,
                                   lowest_decile=args.flag_lowest_decile, flag_constant_low=args.flag_constant_low,
                                   span_flag_on=args.span_flag_on,
                                   gamma_alpha=args.gamma_alpha, gamma_beta=args.gamma_beta,
                                   gamma_empty=args.gamma_empty, gamma_samples=args.gamma_samples,
                                   gamma_seed=args.gamma_seed, min_gt_accuracy=args.min_gt_accuracy,
                                   min_gt_items=args.min_gt_items, consensus=args.consensus,
                                   consensus_prior=args.consensus_prior, flag_on=args.flag_on,
                                   min_posterior=args.min_posterior)


def _project_options(args: argparse.Namespace, project: int | None) -> ProjectOptions:
    """The options of ``project``.

    They are taken from the flags, then the settings file's top, then its section for the project.
    """
    from plugin.project_settings import read_project_settings
    from plugin.settings import ProjectOptions

    mapping, scoring = _options(args)
    base = ProjectOptions(mapping=mapping, scoring=scoring,
                          review=_review(args) if hasattr(args, "no_tab") else ReviewOptions())
    if args.settings is None:
        return base
    return read_project_settings(args.settings, base=base).for_project(project)


def _review(args: argparse.Namespace) -> ReviewOptions:
    return ReviewOptions(tab=not args.no_tab, mirror_to_data=args.mirror_to_data, escalate=args.escalate,
                         max_overlap=args.max_overlap, consensus_predictions=args.consensus_predictions)


def _add_report_parser(commands: _Commands) -> None:
    parser = commands.add_parser(
        "report",
        help="write the admin report of a project: one HTML page, or its tables as CSV or JSON",
        description="Read a project (or a JSON export) and write its agreement report: the headline with the "
                    "annotations still needed, agreement over time, the kappa family per control and label, "
                    "annotators, confused labels, the tasks' agreement and the flagged tasks. The HTML file is "
                    "self-contained and works offline. Nothing is written to Label Studio.",
    )
    _add_source_options(parser, export="a Label Studio JSON export file, read offline")
    _add_connection_options(parser, writes=False)
    _add_scoring_options(parser)
    output = parser.add_argument_group("output")
    output.add_argument("--out", type=Path, required=True,
                        help="the file to write (a folder for --format csv: one CSV file per table)")
    output.add_argument("--format", choices=("html", "csv", "json"), default="html", help="html (default), csv, json")
    output.add_argument("--target-width", type=float, default=0.1,
                        help="the width of SPA's interval the annotations still needed are counted for (0.1)")
    output.add_argument("--quiet", action="store_true", help="no progress on stderr")
    saved = parser.add_argument_group("saved state")
    saved.add_argument("--state-dir", type=Path, metavar="DIR",
                       help="restore the project's state saved here (by serve, sync or a report) and read only the "
                            "tasks changed since, then save it again; signed with $AGREEMENT_WEBHOOK_SECRET "
                            "(default: none, every task is read)")
    parser.set_defaults(handler=_run_report)


def _run_report(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from plugin.clock import now_text
    from plugin.keeper.sync import monitor_report, read_project
    from plugin.labelstudio.client import LabelStudioClient, LabelStudioError
    from plugin.report import build_report, check_writable, write_report, written_text
    from plugin.settings import ReportOptions
    from plugin.state.project import ProjectState
    from plugin.state.saved import StateFiles
    from plugin.summary import saved_state_lines

    _settle(args)
    try:
        check_writable(args.out, format=args.format)  # before an hour of reading, not after
        tasks, controls = _read_export(args)
        chosen = _project_options(args, args.project)
        mapping, scoring = chosen.mapping, chosen.scoring
        options = ReportOptions(target_width=args.target_width)
        said: list[str] = []
        if tasks is not None and controls is not None:
            if args.state_dir is not None:
                raise SettingsError("--state-dir is for a live project (--project), not --export.")
            state = ProjectState.from_tasks(tasks, controls, mapping=mapping, scoring=scoring)
            report = build_report(state.snapshot(), source=f"Export {args.export.name}", generated_at=now_text(),
                                  people=tasks.people, options=options)
        else:
            connection = _connection(args)
            files = None if args.state_dir is None else StateFiles(args.state_dir, secret=_state_secret(),
                                                                   source=connection.url)
            client = LabelStudioClient(connection)
            monitor = read_project(client, args.project, mapping=mapping, scoring=scoring,
                                   progress=_progress_bar(stderr, args.quiet), state=files)
            report = monitor_report(client, monitor, connection.url, options=options)
            read = monitor.last_pass()
            said = saved_state_lines({} if read is None else {"kind": read.kind, "n_tasks": read.n_tasks},
                                     monitor.saved_state())
        written = write_report(report, args.out, format=args.format)
    except (InputError, LabelStudioError, OSError) as error:  # the user's to mend; anything else is a bug
        print(f"ls-agreement report: error: {error}", file=stderr)
        return 2
    print("\n".join([written_text(report, args.out, written), *said]), file=stdout)
    return 0


def _add_serve_parser(commands: _Commands) -> None:
    parser = commands.add_parser(
        "serve",
        help="keep every task's scores current from Label Studio's webhooks",
        description="Monitor projects live: register a webhook on each, then refresh a task's scores on every "
                    "annotation event, and run a full pass (read, diff, write what differs) at start and on a "
                    "schedule. AGREEMENT_WEBHOOK_SECRET must be set.",
    )
    parser.add_argument("--project", action="append",
                        help="project id, repeatable, or 'all': every project the token can see, and those created "
                             "later (default: $AGREEMENT_PROJECTS, comma-separated, or all)")
    parser.add_argument("--discover-interval", type=float, default=60.0,
                        help="seconds between reads of the project list: new projects with --project all, deleted "
                             "ones always (60)")
    parser.add_argument("--shard", metavar="K/N",
                        help="run as shard K of N services sharing the projects: monitor only the project ids K, "
                             "K+N, K+2N, ... (default: $AGREEMENT_SHARD, or every project named); 'auto' in a "
                             "StatefulSet: K is the pod's index + 1 ($AGREEMENT_POD_INDEX, else the ordinal ending "
                             "$POD_NAME or $HOSTNAME), N is $AGREEMENT_SHARDS")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=9090, help="port to listen on (9090)")
    parser.add_argument("--public-url", help="URL Label Studio reaches this service at (default http://HOST:PORT)")
    parser.add_argument("--reconcile-interval", type=float, default=300.0,
                        help="seconds between full passes that write whatever events missed (300)")
    parser.add_argument("--keep-webhooks", action="store_true",
                        help="leave this service's webhooks in Label Studio when it stops (removed by default)")
    parser.add_argument("--full-pass-every", type=int, default=12,
                        help="every this many passes reads every task; the others read only the tasks Label Studio "
                             "changed since (12: hourly at the default interval)")
    parser.add_argument("--read-rate", type=float, default=200.0,
                        help="tasks per second a full pass reads at most (200; 0 for no limit)")
    parser.add_argument("--unhealthy-after", type=float, default=300.0,
                        help="/health answers 503 once Label Studio has been unreachable this many seconds (300)")
    parser.add_argument("--state-dir", type=Path, metavar="DIR",
                        help="save each project's state here after a pass, and restore it at start, so that a "
                             "restart reads only the tasks changed since (default: $AGREEMENT_STATE_DIR, or none: "
                             "a start reads every task)")
    parser.add_argument("--metrics-annotators", type=int, default=10, metavar="N",
                        help="/metrics shows the estimated accuracy of the N least accurate annotators per control "
                             "(10; 0 for none)")
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="INFO",
                        help="INFO (default): one line per pass and per problem; DEBUG adds one per request")
    parser.add_argument("--log-format", choices=LOG_FORMATS, default="text",
                        help="text (default) or json (one object per line, for log shippers)")
    _add_connection_options(parser)
    _add_scoring_options(parser)
    _add_review_options(parser)
    parser.set_defaults(handler=_run_serve)


def _projects(given: list[str]) -> tuple[bool, tuple[int, ...]]:
    """``--project`` values: whether every project is asked for ('all'), and the ids named.

    Raises
    ------
    SettingsError
        If none is given, or a value is neither 'all' nor a positive whole number.
    """
    values = [value.strip() for value in given if value.strip()]
    if not values:
        raise SettingsError("Name the projects to monitor: --project ID (repeatable), --project all, "
                            "or AGREEMENT_PROJECTS=1,2 or all.")
    if any(value.lower() == "all" for value in values):
        if len(values) > 1:
            raise SettingsError("Give either --project all or project ids, not both.")
        return True, ()
    if not all(value.isdigit() and int(value) > 0 for value in values):
        raise SettingsError(f"Project ids must be positive whole numbers, or 'all'; got {', '.join(values)}.")
    return False, tuple(int(value) for value in values)


def _path(given: str | None) -> Path | None:
    """A path from an environment variable; unset or empty is none."""
    return Path(given) if given else None


def _webhook_secret(*, purpose: str = "") -> str:
    """The webhook secret (``$AGREEMENT_WEBHOOK_SECRET``).

    It is ``serve``'s, and the key its saved states are signed with, so that ``sync`` and ``report`` sharing a
    state directory read its files (``purpose`` says which, in the error).

    Raises
    ------
    SettingsError
        If it is not set, or too weak.
    """
    from plugin.service.app import check_secret_strength

    secret = os.environ.get("AGREEMENT_WEBHOOK_SECRET", "")
    try:
        check_secret_strength(secret)
    except SettingsError as error:
        raise SettingsError(f"{purpose}{error}") from None
    return secret


def _state_secret() -> str:
    """The key a saved state is signed with (:func:`_webhook_secret`)."""
    return _webhook_secret(purpose="A state directory's files are signed with the webhook secret: ")


def _shard(given: str | None) -> tuple[int, int] | None:
    """``--shard K/N``: this service's share of the projects, or None for every project named.

    ``--shard auto`` (``AGREEMENT_SHARD=auto``) is for the pods of a Kubernetes StatefulSet: N is
    ``AGREEMENT_SHARDS`` (the StatefulSet's replicas) and K the pod's index plus one, from ``AGREEMENT_POD_INDEX``
    (the ``apps.kubernetes.io/pod-index`` label of Kubernetes 1.28+, through the downward API) or else the ordinal
    that ends the pod's name (``POD_NAME``, else ``HOSTNAME``): pod ``agreement-2`` is shard 3. The environment is
    read here, at the entry point, as every other setting.

    Raises
    ------
    SettingsError
        If the value is not two whole numbers K/N with 1 <= K <= N, or ``auto`` cannot be resolved: no
        ``AGREEMENT_SHARDS``, no pod index, or an index past the count.
    """
    if not given or not given.strip():
        return None
    if given.strip().lower() == "auto":
        return _shard_of_pod()
    index, slash, count = given.strip().partition("/")
    if not (slash and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise SettingsError(f"A shard is K/N, two whole numbers with 1 <= K <= N (e.g. 1/2); got {given.strip()!r}. "
                            "Or auto, in a StatefulSet.")
    return int(index), int(count)


def _shard_of_pod() -> tuple[int, int]:
    """``--shard auto``: shard K of N from the pod's index and ``AGREEMENT_SHARDS`` (:func:`_shard`)."""
    import re

    count = os.environ.get("AGREEMENT_SHARDS", "").strip()
    if not (count.isdigit() and int(count) >= 1):
        raise SettingsError("--shard auto takes the number of shards from AGREEMENT_SHARDS (the StatefulSet's "
                            f"replicas), a whole number of 1 or more; got {count!r}.")
    label = os.environ.get("AGREEMENT_POD_INDEX", "").strip()  # empty before Kubernetes 1.28: the label is missing
    if label:
        if not label.isdigit():
            raise SettingsError(f"--shard auto: AGREEMENT_POD_INDEX is the pod's index, a whole number; got {label!r}.")
        index, source = int(label), f"AGREEMENT_POD_INDEX={label}"
    else:
        variable = "POD_NAME" if os.environ.get("POD_NAME", "").strip() else "HOSTNAME"
        name = os.environ.get(variable, "").strip()
        ordinal = re.fullmatch(r".+-(\d+)", name)
        if ordinal is None:
            raise SettingsError("--shard auto needs the pod's index: AGREEMENT_POD_INDEX (the "
                                "apps.kubernetes.io/pod-index label) or a pod name ending in its ordinal (POD_NAME "
                                f"or HOSTNAME, e.g. agreement-2); got {variable}={name!r}.")
        index, source = int(ordinal.group(1)), f"{variable}={name}"
    if index + 1 > int(count):
        raise SettingsError(f"--shard auto: {source} is shard {index + 1}, past AGREEMENT_SHARDS={count}: set "
                            "AGREEMENT_SHARDS to the StatefulSet's replicas.")
    return index + 1, int(count)


def _run_serve(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    import uvicorn

    from plugin.labelstudio.client import LabelStudioClient
    from plugin.service.app import ServiceSettings, create_app

    try:
        secret = _webhook_secret()
        all_projects, project_ids = _projects(args.project or os.environ.get("AGREEMENT_PROJECTS", "")
                                              .replace(",", " ").split())
        mapping, scoring = _options(args)
        settings_file = args.settings or _path(os.environ.get("AGREEMENT_SETTINGS"))
        if settings_file is not None:  # refused here, in one line, rather than when the service starts
            from plugin.project_settings import read_project_settings
            from plugin.settings import ProjectOptions

            read_project_settings(settings_file, base=ProjectOptions(mapping=mapping, scoring=scoring,
                                                                     review=_review(args)))
        connection = _connection(args)
        settings = ServiceSettings(projects=project_ids, secret=secret, connection=connection,
                                   public_url=args.public_url or f"http://{args.host}:{args.port}",
                                   mapping=mapping, scoring=scoring, review=_review(args),
                                   reconcile_interval=args.reconcile_interval,
                                   read_rate=args.read_rate or None, unhealthy_after=args.unhealthy_after,
                                   full_pass_every=args.full_pass_every, keep_webhooks=args.keep_webhooks,
                                   all_projects=all_projects, discover_interval=args.discover_interval,
                                   settings_file=settings_file,
                                   shard=_shard(args.shard or os.environ.get("AGREEMENT_SHARD")),
                                   state_dir=args.state_dir or _path(os.environ.get("AGREEMENT_STATE_DIR")),
                                   metrics_annotators=args.metrics_annotators)
    except SettingsError as error:
        print(f"ls-agreement serve: error: {error}", file=stderr)
        return 2
    configure_logging(level=args.log_level, fmt=args.log_format)
    app = create_app(settings, LabelStudioClient(connection))
    _settle(args)
    # No access log: paths under /s/<secret>/ would write the secret into it.
    uvicorn.run(app, host=args.host, port=args.port, access_log=False, log_level=args.log_level.lower(),
                log_config=None)
    return 0


def _add_demo_parser(commands: _Commands) -> None:
    parser = commands.add_parser(
        "demo",
        help="run everything on a local Label Studio with simulated annotators",
        description="Start a local Label Studio, create a demo project, start the live service and simulate "
                    "annotators of different reliability while SPA and alpha converge. Ctrl-C stops everything.",
    )
    parser.add_argument("--data-dir", type=Path, default=Path("var/demo"), help="where Label Studio keeps its data")
    parser.add_argument("--label-studio", default=os.environ.get("LABEL_STUDIO_BIN"),
                        help="the label-studio command (default: $LABEL_STUDIO_BIN, else next to Python or on PATH)")
    parser.add_argument("--port", type=int, default=8080, help="Label Studio's port (8080)")
    parser.add_argument("--service-port", type=int, default=9090, help="the agreement service's port (9090)")
    parser.add_argument("--tasks", type=int, default=300, help="tasks in the demo project (300)")
    parser.add_argument("--annotators", type=int, default=5, help="simulated annotators (5)")
    parser.add_argument("--pace", type=float, default=1.5,
                        help="mean seconds between one annotator's submissions (1.5; 0 submits as fast as Label "
                             "Studio accepts, which saturates it and delays every write)")
    parser.add_argument("--reconcile-interval", type=float, default=20.0,
                        help="seconds between the service's passes (20), which bring every task's alpha up to date "
                             "after the last annotation")
    parser.add_argument("--no-wait", action="store_true", help="stop everything when the simulation ends")
    parser.add_argument("--seed", type=int, default=0)
    parser.set_defaults(handler=_run_demo)


def _run_demo(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from plugin.demo import DemoSettings, run_demo

    try:
        settings = DemoSettings(data_dir=args.data_dir, label_studio=args.label_studio, port=args.port,
                                service_port=args.service_port, tasks=args.tasks, annotators=args.annotators,
                                pace=args.pace, wait=not args.no_wait, seed=args.seed,
                                reconcile_interval=args.reconcile_interval)
    except ValueError as error:
        print(f"ls-agreement demo: error: {error}", file=stderr)
        return 2
    try:
        return run_demo(settings, stdout)
    except (RuntimeError, OSError) as error:
        print(f"ls-agreement demo: error: {error}", file=stderr)
        return 1


def build_parser() -> argparse.ArgumentParser:
    """The full command-line parser."""
    parser = _Parser(
        prog="ls-agreement",
        description="Inter-annotator agreement for Label Studio: SPA, Krippendorff's alpha, the kappa family, "
                    "augmented kappa and P_I.",
    )
    parser.add_argument("--version", action="version", version=f"ls-agreement {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_compute_parser(commands)
    _add_sync_parser(commands)
    _add_report_parser(commands)
    _add_serve_parser(commands)
    _add_demo_parser(commands)
    return parser


PROGRESS_WIDTH = 100
"""The most columns a progress bar takes (fewer in a narrower terminal)."""


def _progress_bar(stderr: TextIO, quiet: bool) -> Progress | None:
    """A ``progress(stage, done, total)`` callback drawing one tqdm bar per stage, at most 100 columns wide."""
    if quiet:
        return None
    import shutil

    from tqdm import tqdm

    bars: dict[str, tqdm[None]] = {}
    width = min(PROGRESS_WIDTH, shutil.get_terminal_size((PROGRESS_WIDTH, 24)).columns)

    def progress(stage: str, done: int, total: int) -> None:
        """Draw the progress of ``stage``: ``done`` of ``total`` tasks.

        ``total`` 0 means not known yet (a counter). A stage that ends (``done >= total``) and starts again gets a
        new bar.
        """
        bar = bars.get(stage)
        if bar is None:
            label = {"fetch": "reading tasks", "fetch changed": "reading changed tasks",
                     "write": "writing scores"}.get(stage, stage)
            bar = bars[stage] = tqdm(total=total or None, desc=label, unit="task", file=stderr, mininterval=1.0,
                                     ncols=width)
        if total:
            bar.total = max(bar.total or 0, total)
        bar.update(done - bar.n)
        if total and done >= total:
            bar.close()
            del bars[stage]

    return progress


def _run_sync(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from plugin.keeper.sync import score_export, sync_project
    from plugin.labelstudio.client import LabelStudioClient, LabelStudioError
    from plugin.state.saved import StateFiles
    from plugin.summary import summary_text, sync_summary

    _settle(args)
    try:
        tasks, controls = _read_export(args)
        chosen = _project_options(args, args.project)
        mapping, scoring = chosen.mapping, chosen.scoring
        progress = _progress_bar(stderr, args.quiet)
        if args.full_read and args.state_dir is None:
            raise SettingsError("--full-read is for a sync with --state-dir (without it, every sync reads every task).")
        if tasks is not None and controls is not None:
            if args.state_dir is not None:
                raise SettingsError("--state-dir is for a live project (--project), not --export.")
            scores, to_write = score_export(tasks, controls, mapping=mapping, scoring=scoring)
            summary = sync_summary(f"Export {args.export}", scores, scoring, dry_run=True, to_write=to_write,
                                   people=tasks.people)
        else:
            connection = _connection(args)
            files = None if args.state_dir is None else StateFiles(args.state_dir, secret=_state_secret(),
                                                                   source=connection.url)
            client = LabelStudioClient(connection)
            report = sync_project(client, args.project, None, mapping=mapping, scoring=scoring,
                                  review=chosen.review, dry_run=args.dry_run, progress=progress, state=files,
                                  full_read=args.full_read)
            summary = sync_summary(f"Project {args.project}", report.scores, scoring, dry_run=args.dry_run,
                                   to_write=report.tasks_to_write, report=report)
    except (InputError, LabelStudioError, OSError) as error:  # the user's to mend; anything else is a bug
        print(f"ls-agreement sync: error: {error}", file=stderr)
        return 2
    print(json.dumps(summary) if args.json else summary_text(summary), file=stdout)
    return 1 if summary["tasks_failed"] else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ls-agreement`` with ``argv`` (default: the process arguments); return the exit status."""
    args = build_parser().parse_args(argv)
    # A process of its own (not a caller passing arguments): what its commands import lives as long as it does.
    args.freeze_startup = argv is None
    try:
        return int(args.handler(args, sys.stdout, sys.stderr))
    except Exception as error:  # noqa: BLE001 (not the user's mistake, which each command tells in one line: a bug)
        bug = keep_bug(error, where=f"running ls-agreement {args.command}", log=False)
        print(f"ls-agreement {args.command}: {bug.reason()}. Please report it with that file.", file=sys.stderr)
        return EX_SOFTWARE


def _settle(args: argparse.Namespace) -> None:
    """Take the startup objects out of the garbage collector's passes.

    Done before a command reads tasks, in a process of its own (:func:`plugin.keeper.memory.freeze_startup_objects`).
    """
    if getattr(args, "freeze_startup", False):
        from plugin.keeper.memory import freeze_startup_objects

        freeze_startup_objects()


if __name__ == "__main__":
    sys.exit(main())
