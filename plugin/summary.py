"""What ``ls-agreement sync`` reports: its summary as data (the ``--json`` output), and in words.

The summary is read from a :class:`plugin.keeper.sync.SyncReport` (a live project)
or from the scores of an export alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugin.keeper.sync import SyncReport
from plugin.mapping.annotations import GROUND_TRUTH_SKIP
from plugin.mapping.labelconfig import PASS_CONFIG, was_inferred
from plugin.settings import ScoringOptions
from plugin.state.project import ProjectScores
from plugin.state.flags import flag_rule
from plugin.state.scoring import named_rows
from plugin.state.spans import gamma_caveat, unitizing_caveat

__all__ = ["saved_state_lines", "summary_text", "sync_summary"]


def sync_summary(source: str, scores: ProjectScores, scoring: ScoringOptions, *, dry_run: bool, to_write: int,
                 report: SyncReport | None = None, people: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The JSON summary of a sync (also the text report's data).

    Annotators are named from ``people``, else from the ``report``'s read of Label Studio's users.
    """
    people = people if people is not None else ({} if report is None else report.people)
    return {
        "source": source,
        "dry_run": dry_run,
        "n_tasks": len(scores.tasks),
        "n_annotations": scores.n_annotations,
        "n_annotators": len(scores.annotators),
        "threshold": scoring.threshold,
        "flagged": scores.tasks.n_flagged(),
        "flag_rule": flag_rule(scoring),
        "tasks_to_write": to_write,
        "tasks_written": 0 if report is None else report.tasks_written,
        "tasks_unchanged": len(scores.tasks) - to_write if report is None else report.tasks_unchanged,
        "tasks_failed": [] if report is None else [{"task": t, "error": e} for t, e in report.failures],
        "tasks_escalated": 0 if report is None else report.tasks_escalated,
        "seconds": {} if report is None else {k: round(v, 3) for k, v in report.seconds.items()},
        "read": {} if report is None else report.read,
        "saved_state": {} if report is None else report.saved_state,
        "controls": {name: _named(score.summary(people=people), people)
                     for name, score in scores.controls.items()},
        "skipped": dict(scores.skips.reasons.most_common()),
        "config": scores.config,
        "not_scored": dict(scores.not_scored),
        "config_inferred": was_inferred(scores.config),
    }


def _named(control: dict[str, Any], people: Mapping[str, str]) -> dict[str, Any]:
    """The control's summary with each annotator's name and email beside the id.

    Names and emails are given where Label Studio knows them.
    """
    if "annotators" in control:
        control["annotators"] = named_rows(control["annotators"], people)
    references = control.get("references") or {}
    for block in [references.get("ground_truth"), *(references.get("models") or {}).values()]:
        if block:
            block["annotators"] = named_rows(block["annotators"], people)
    return control


def _span_lines(name: str, spans: Mapping[str, Any] | None) -> list[str]:
    """A span control's F1 and gamma, one line each (nothing for other controls).

    Unitizing alpha (1995/2004) is given with why it is unreliable where it is (:func:`unitizing_caveat`).
    """
    if not spans:
        return []
    exact, overlap = spans["f1"]["exact"], spans["f1"]["overlap"]
    gamma = spans["gamma"]
    interval = f" [{_fmt(gamma['low'])}, {_fmt(gamma['high'])}]" if gamma["value"] is not None else ""
    caveat = unitizing_caveat(int(spans["unitizing_alpha"].get("most_annotators", 0)))
    left_out = gamma_caveat(int(gamma.get("n_unaligned_tasks", 0)))
    return [(f"{name}: pairwise F1 {_fmt(exact['mean'])} exact, {_fmt(overlap['mean'])} with overlap (Jaccard "
            f">= {overlap['jaccard']:.2f}), mean over {len(exact['pairs'])} annotator pairs; unitizing alpha "
            f"{_fmt(spans['unitizing_alpha']['value'])}{f' ({caveat})' if caveat else ''}, u-alpha "
            f"{_fmt(spans['u_alpha']['value'])}."),
            (f"{name}: gamma {_fmt(gamma['value'])}{interval} (expected disorder from {gamma['n_samples']} sampled "
            f"corpora, seed {gamma['seed']}), over {spans['n_units']} spans on {spans['n_continua']} continua"
            f"{f'; it {left_out}' if left_out else ''}.")]


def reference_lines(name: str, references: Mapping[str, Any] | None) -> list[str]:
    """A control's references in a few lines.

    The lines give accuracy against the ground truth and who falls below the least, and each model version's mean
    kappa beside the annotators' own.
    """
    if not references:
        return []
    lines = []
    truth = references.get("ground_truth")
    if truth:
        rows = truth["annotators"]
        shown = ", ".join(f"{r.get('name', r['annotator'])} {_fmt(r['accuracy'], 2)}" for r in rows[:8])
        lines.append(f"{name}: against the ground truth on {_tasks(truth['n_tasks'])}, accuracy {shown}"
                     f"{' ...' if len(rows) > 8 else ''}.")
        if truth.get("below"):
            names = {r["annotator"]: r.get("name", r["annotator"]) for r in rows}
            lines.append(f"{name}: below the least agreement with the ground truth ({truth['min_accuracy']:.2f} over "
                         f"at least {truth['min_items']} items): {', '.join(names[a] for a in truth['below'])}.")
    for version, model in (references.get("models") or {}).items():
        lines.append(f"{name}: model {version} on {_tasks(model['n_tasks'])}: mean kappa {_fmt(model['kappa_mean'])} "
                     f"against the annotators, whose own mean pairwise kappa there is "
                     f"{_fmt(model['human_kappa_mean'])}.")
    lines += [f"{name}: {note}" for note in references.get("notes", ())]
    return lines


def consensus_lines(name: str, consensus: Mapping[str, Any] | None) -> list[str]:
    """A control's consensus in a line: its method and the annotators it trusts least (nothing without one)."""
    if not consensus:
        return []
    accuracy = sorted((row["accuracy"], row["name"], row["n_answers"]) for row in consensus["annotators"].values()
                      if "accuracy" in row)
    if not accuracy:
        return [f"{name}: consensus by majority vote over {consensus['n_items']} items."]
    least = ", ".join(f"{who} {value:.2f} ({answers} answer{'' if answers == 1 else 's'})"
                      for value, who, answers in accuracy[:3])
    known = f", {consensus['n_ground_truth']} items known from ground truth" if consensus["n_ground_truth"] else ""
    steps = "converged" if consensus["converged"] else "not converged"
    line = (f"{name}: consensus by Dawid-Skene over {consensus['n_items']} items ({consensus['iterations']} steps, "
            f"{steps}{known}); least estimated accuracy: {least}.")
    return [line]


def _tasks(n: int) -> str:
    return f"{n} task{'' if n == 1 else 's'}"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def saved_state_lines(read: Mapping[str, Any], saved: Mapping[str, Any]) -> list[str]:
    """What a sync (a report) with a state directory read and did with the saved state, a line each.

    No lines without a state directory. ``read`` is as :attr:`plugin.keeper.sync.SyncReport.read`, ``saved`` as its
    ``saved_state``.
    """
    lines = []
    if "restored" in saved and read.get("kind") == "changed":
        restored = saved["restored"]
        lines.append(f"Read {read['n_tasks']} tasks changed since the saved state of {restored['saved_at']} "
                     f"({restored['n_tasks']} tasks restored).")
    elif "restored" in saved:
        lines.append(f"Read every task ({read['n_tasks']} tasks read): a saved state was restored, but the "
                     "project's task count differed from it (tasks deleted since).")
    if "refused" in saved:
        lines.append(f"Read every task: the saved state was not used ({saved['refused']['reason']}).")
    if "not used" in saved:
        lines.append(f"Read every task: {saved['not used']['reason']}.")
    if "missing" in saved:
        lines.append("Read every task: no saved state yet.")
    if "saved" in saved:
        lines.append(f"Saved the project's state ({saved['saved']['n_tasks']} tasks, {saved['saved']['bytes']:,} "
                     f"bytes) in {saved['saved']['seconds']:.1f} s.")
    if "failed" in saved:
        lines.append(f"The project's state was not saved ({saved['failed']['reason']}).")
    return lines


def summary_text(summary: Mapping[str, Any]) -> str:
    """The summary (:func:`sync_summary`) as the lines ``ls-agreement sync`` prints."""
    lines = [(f"{summary['source']}: {summary['n_tasks']} tasks, {summary['n_annotations']} annotations by "
              f"{summary['n_annotators']} annotators")]
    lines.append(f"{'control':20s} {'tag':16s} {'level':9s} {'items':>6s}  {'SPA':>6s} {'95% interval':>16s} "
                 f"{'alpha':>7s} {'fleiss':>7s} {'AC1/AC2':>8s}")
    for name, c in summary["controls"].items():
        ci = c["spa_ci"]
        interval = f"[{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci else "-"
        gwet = c.get("gwet") or {}
        lines.append(f"{name:20s} {c['tag']:16s} {c['level']:9s} {c['n_items']:6d}  {_fmt(c['spa']):>6s} "
                     f"{interval:>16s} {_fmt(c['alpha']):>7s} {_fmt(c['fleiss']):>7s} "
                     f"{_fmt(gwet.get('value')):>8s}")
    lines.append(f"Flagged {summary['flagged']} tasks ({summary['flag_rule']}).")
    if summary["dry_run"]:
        lines.append(f"Dry run: {summary['tasks_to_write']} tasks would be written.")
    else:
        seconds = summary["seconds"]
        lines.append(f"Wrote scores to {summary['tasks_written']} tasks ({summary['tasks_unchanged']} unchanged, "
                     f"{len(summary['tasks_failed'])} failed) in {sum(seconds.values()):.1f} s "
                     f"(fetch {seconds['fetch']:.1f} s, compute {seconds['compute']:.1f} s, "
                     f"write {seconds['write']:.1f} s).")
    lines += saved_state_lines(summary.get("read") or {}, summary.get("saved_state") or {})
    if summary["tasks_escalated"]:
        lines.append(f"Asked Label Studio for one more annotator on {summary['tasks_escalated']} flagged tasks "
                     "(overlap raised by one).")
    for failure in summary["tasks_failed"][:10]:
        lines.append(f"Task {failure['task']} was not written: {failure['error']}")
    for name, c in summary["controls"].items():
        lines.extend(_span_lines(name, c.get("spans")))
    for name, c in summary["controls"].items():
        for row in c.get("annotators", []):
            if row["outlier"]:
                lines.append(f"{name}: annotator {row['name']} is an outlier: mean kappa {_fmt(row['mean_pairwise'])} "
                             f"with the others over {row['n_compared']} items (below 0, or more than 2 scaled MADs "
                             "below the annotators' median).")
        if c.get("confusions"):
            top = c["confusions"][0]
            lines.append(f"{name}: most confused labels {top['labels'][0]!r} and {top['labels'][1]!r}.")
    for name, c in summary["controls"].items():
        lines.extend(reference_lines(name, c.get("references")))
    for name, c in summary["controls"].items():
        lines.extend(consensus_lines(name, c.get("consensus")))
    for name, remarks in summary["config"].items():
        for problem in remarks["problems"]:
            lines.append(f"Control {name!r} is not scored: {problem}.")
        for note in remarks["notes"]:
            lines.append(f"Control {name!r}: {note}.")
    for name, c in summary["controls"].items():
        lines.extend(f"Control {name!r}: {note}" for note in c.get("notes", ()))
    for name, reason in summary["not_scored"].items():
        lines.append(f"Control {name!r} is not scored: {reason}.")
    if summary["config_inferred"]:
        lines.append(PASS_CONFIG)
    for reason, count in summary["skipped"].items():
        lines.append(f"{count} skipped: {reason}")
    if summary["skipped"].get(GROUND_TRUTH_SKIP):
        lines.append("Label Studio marks imported annotations as ground truth; pass --include-ground-truth to count "
                     "them as annotators.")
    return "\n".join(lines)
