"""The admin report as one self-contained HTML page: inline CSS and SVG, no script, nothing fetched.

Every text that came from Label Studio (labels, names, reasons, control
names) is escaped, so a label such as ``<script>`` shows as text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape
from typing import Any

import pandas as pd

from plugin.report import charts
from plugin.report.tables import Report

__all__ = ["render_html"]

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#1f3b57;color:#fff;padding:18px 28px}
header h1{margin:0 0 4px;font-size:22px}
header p{margin:0;opacity:.85}
nav{padding:8px 28px;background:#e9eef3;font-size:14px}
nav a{margin-right:14px;color:#1f3b57}
main{padding:8px 28px 40px;max-width:1200px}
section{margin-top:26px}
h2{font-size:18px;border-bottom:1px solid #ccd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.cards{display:flex;flex-wrap:wrap;gap:12px}
.card{background:#fff;border:1px solid #dde;border-radius:6px;padding:10px 14px;min-width:210px}
.card .name{font-weight:600}
.card .big{font-size:26px;color:#1f6fb2}
.card .small{font-size:13px;color:#555}
table{border-collapse:collapse;background:#fff;font-size:13px;margin:6px 0}
th,td{border:1px solid #dde;padding:3px 8px;text-align:right}
th{background:#eef2f6}
td.text,th.text{text-align:left}
tr.outlier td{background:#fbe9e7}
.undefined{color:#999}
.note{font-size:13px;color:#555}
svg{max-width:100%;height:auto}
figure.chart{margin:0 0 10px}
figure.chart figcaption{contain:inline-size;margin-top:2px}
.pair{display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start}
.pair>div{min-width:0;max-width:100%;overflow-x:auto}
td.text{overflow-wrap:anywhere}
.nowrap{white-space:nowrap}
"""

SECTIONS = (("headline", "Headline"), ("time", "Over time"), ("family", "Per control and label"),
            ("spans", "Spans"), ("annotators", "Annotators"), ("references", "Against references"),
            ("consensus", "Consensus"), ("labels", "Confused labels"), ("tasks", "Tasks"),
            ("sweep", "Multiple choices"), ("flagged", "Flagged tasks"), ("notes", "Notes"))


def _chart(chart: charts.Chart | None) -> str:
    """A chart with its caption, which says what it draws (computed from the chart's data); "" for none."""
    return chart.html() if chart is not None else ""


def _number(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return '<span class="undefined" title="undefined: see Notes">&ndash;</span>'
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return escape(str(value))


def _table(frame: pd.DataFrame, columns: Sequence[tuple[str, str]], *, text: Sequence[str] = (),
           cell: dict[str, Callable[[Any], str]] | None = None,
           row_class: Callable[[pd.Series], str] | None = None) -> str:
    """An HTML table of ``columns`` (key, heading).

    ``cell`` renders a column its own way (already escaped).
    """
    cell = cell or {}
    head = "".join(f'<th class="{"text" if key in text else ""}">{escape(title)}</th>' for key, title in columns)
    body = []
    for _, row in frame.iterrows():
        cls = row_class(row) if row_class else ""
        cells = "".join(
            f'<td class="{"text" if key in text else ""}">'
            f'{cell[key](row[key]) if key in cell else _number(row[key])}</td>' for key, _ in columns)
        body.append(f'<tr class="{cls}">{cells}</tr>')
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _headline(report: Report) -> str:
    cards = []
    spans = report.span_measures.set_index(["control", "measure"])
    for row in report.headline.itertuples(index=False):
        needed = row.annotations_needed
        need = ("no interval yet" if needed is None or (isinstance(needed, float) and math.isnan(needed))
                else "interval narrow enough" if needed == 0 else f"about {int(needed):,} more annotations")
        item_measures = (f'SPA {_number(row.spa)}</div><div class="small">95% interval [{_number(row.spa_low)}, '
                         f'{_number(row.spa_high)}]</div><div class="small">alpha {_number(row.alpha)} &middot; '
                         f'{escape(str(row.gwet_coefficient or "AC1"))} {_number(row.gwet)}</div>')
        counted = f"{row.n_items:,} items, {row.n_annotations:,} annotations"
        if (row.control, "gamma") in spans.index:  # a span control leads with its span measures
            measure = spans.loc[row.control]
            slip = str(measure.loc["spa", "caveat"]).split(": ")[0]
            item_measures = (
                f'F1 {_number(measure.loc["f1_overlap", "value"])} <span class="small">overlap</span></div>'
                f'<div class="small">gamma {_number(measure.loc["gamma", "value"])} &middot; F1 '
                f'{_number(measure.loc["f1_exact", "value"])} exact</div>'
                f'<div class="small">{escape(slip[0].upper() + slip[1:])}: SPA {_number(row.spa)} '
                f'[{_number(row.spa_low)}, {_number(row.spa_high)}], alpha {_number(row.alpha)} &middot; '
                f'{escape(str(row.gwet_coefficient or "AC1"))} {_number(row.gwet)}</div>')
            counted = (f"{row.n_items:,} aligned items, {row.n_annotations:,} annotations, "
                       f"{int(row.n_regions):,} regions")
        cards.append(
            f'<div class="card"><div class="name">{escape(row.control)} <span class="small">{escape(row.tag)}, '
            f'{escape(row.level)}</span></div><div class="big">{item_measures}<div class="small">{counted}; for an '
            f"SPA interval of {report.options.target_width:g}: {need}</div></div>")
    o = report.overview
    intro = (f'<p>{o["n_tasks"]:,} tasks, {o["n_annotations"]:,} annotations by {o["n_annotators"]:,} '
             f'annotators; <b>{o["flagged"]:,}</b> tasks flagged: {escape(o["flag_rule"])}.</p>')
    return intro + f'<div class="cards">{"".join(cards)}</div>'


def _family(report: Report) -> str:
    columns = [("label", "label"), ("n_items", "items"), ("kappa_co", "kappa Co"), ("kappa_sc", "kappa S&C"),
               ("pabak", "PABAK"), ("p_i", "P_I"), ("r_i", "R_i"), ("alpha", "alpha"), ("spa", "SPA"),
               ("specific_agreement", "specific agr.")]
    parts = [('<p class="note">kappa Co: Cohen (each annotator\'s own marginals), averaged over pairs; kappa S&C: '
             "Siegel &amp; Castellan (pooled marginals, Fleiss' form); PABAK: prevalence- and bias-adjusted kappa. "
             "A low kappa beside a high PABAK points to skewed label prevalence rather than disagreement "
             "(Di Eugenio &amp; Glass 2004). R_i &gt; 1: the label is agreed on more often than chance "
             "(Klemens 2012). Each label's row reads it against all other labels.</p>")]
    for name, part in report.family.groupby("control", sort=False):
        parts.append(f"<h3>{escape(str(name))}</h3>" + _table(part, columns, text=("label",)))
    return "".join(parts)


def _general(value: Any) -> str:
    """A disagreement with 3 significant digits, as a reader reads it; blank where the measure has none.

    Small values are written ``1.8 × 10⁻⁵`` (not ``1.8e-05``), and 0 as ``0``.

    >>> _general(0.01234), _general(1.8e-05), _general(0.0), _general(float("nan"))
    ('0.0123', '1.8&thinsp;&times;&thinsp;10<sup>&minus;5</sup>', '0', '')
    """
    if not (isinstance(value, float) and math.isfinite(value)):
        return ""
    if value == 0:
        return "0"
    if abs(value) >= 1e-3:
        return f"{value:.3g}"
    mantissa, exponent = f"{value:.2g}".split("e") if "e" in f"{value:.2g}" else (f"{value:.2g}", "0")
    power = int(exponent)
    sign = "&minus;" if power < 0 else ""
    return f"{mantissa}&thinsp;&times;&thinsp;10<sup>{sign}{abs(power)}</sup>"


def _link(url: Any) -> str:
    """A task's link into Label Studio, or nothing (a report of an export)."""
    return f'<a href="{escape(url)}">open</a>' if isinstance(url, str) else ""


def _interval(low: Any, high: Any) -> str:
    """An interval as ``[low, high]``, or the undefined mark (a kappa's where one side gave one label)."""
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (low, high)):
        return _number(None)
    return f"[{_number(low)},&nbsp;{_number(high)}]"


def _spread(mean: Any, sd: Any) -> str:
    if isinstance(mean, float) and math.isnan(mean):
        return _number(mean)
    return f"{_number(mean)}&nbsp;&plusmn;&nbsp;{_number(sd)}"


def _spans(report: Report) -> str:
    if report.span_measures.empty:
        return ""
    parts = [('<p class="note">Span controls scored as spans rather than as aligned items. Pairwise F1 is '
              "2&middot;TP / (|A| + |B|) for each pair of annotators, counts summed over tasks; shown as the mean "
              "&plusmn; the population SD over the pairs. The alphas and gamma are 1 for perfect agreement and 0 "
              "for agreement at chance.</p>")]
    for name, measures in report.span_measures.groupby("control", sort=False):
        labels = report.span_labels[report.span_labels["control"] == name]
        pairs = report.span_pairs[report.span_pairs["control"] == name]
        offsets = report.span_offsets[report.span_offsets["control"] == name]
        unreliable = bool((measures.loc[measures["measure"] == "unitizing_alpha", "caveat"].astype(str) != "").any())
        interval = measures.apply(lambda r: "" if math.isnan(r["low"]) else
                                  f"[{_number(r['low'])},&nbsp;{_number(r['high'])}]", axis=1)
        table = _table(measures.assign(interval=interval, n_pairs=measures["n_pairs"].map(
                           lambda n: "" if n is None or (isinstance(n, float) and math.isnan(n)) else str(int(n)))),
                       [("name", "measure"), ("value", "value"), ("sd", "SD over pairs"), ("interval", "interval"),
                        ("observed", "observed dis."), ("expected", "expected dis."), ("n_pairs", "pairs"),
                        ("answers", "what it answers"), ("caveat", "read it here")],
                       text=("name", "answers", "caveat"),
                       cell={"interval": str, "n_pairs": str, "observed": _general, "expected": _general,
                             "sd": lambda v: "" if isinstance(v, float) and math.isnan(v) else _number(v)})
        per_label = _table(labels.assign(
            exact=[_spread(m, d) for m, d in zip(labels["f1_exact"], labels["f1_exact_sd"], strict=True)],
            overlap=[_spread(m, d) for m, d in zip(labels["f1_overlap"], labels["f1_overlap_sd"], strict=True)]),
            [("label", "label"), ("n_spans", "spans"), ("exact", "F1 exact"), ("f1_exact_pairs", "pairs"),
             ("overlap", "F1 overlap"), ("f1_overlap_pairs", "pairs"),
             ("unitizing_alpha", "unitizing alpha (unreliable here: see above)" if unreliable else "unitizing alpha")],
            text=("label",), cell={"exact": str, "overlap": str})
        pair_table = _table(pairs, [("first", "annotator A"), ("second", "annotator B"), ("n_first", "A's spans"),
                                    ("n_second", "B's spans"), ("f1_exact", "F1 exact"), ("f1_overlap", "F1 overlap")],
                            text=("first", "second"))
        unit = str(offsets["unit"].iloc[0]) if len(offsets) else ""
        same = int(((offsets["start_offset"] == 0) & (offsets["end_offset"] == 0)).sum())
        chart = _chart(charts.offset_figure(offsets, control=str(name), unit=unit))
        about = (f'<p class="note">{len(offsets):,} pair{"s" if len(offsets) > 1 else ""} of spans matched by overlap '
                 f"(same label, as overlap F1 matches them); {same:,} of them have the same start and end. "
                 "Each bar counts the pairs whose "
                 f"second annotator's boundary lies that far from the first's ({escape(unit)}).</p>"
                 if len(offsets) else '<p class="note">No two annotators\' spans matched.</p>')
        first = measures.iloc[0]
        spans_all = labels[labels["label"] == "(all labels)"]
        n_spans = int(spans_all["n_spans"].iloc[0]) if len(spans_all) else 0
        where = {"text": "each task's text", "media": "the media's length",
                 "extent": "the extent of the spans where the task gives no length"}.get(str(first["lengths"]), "")
        counted = (f'<p class="note">{n_spans:,} spans on {int(first["n_continua"]):,} continua (a task, or a part '
                   f"of one); the continua's lengths, which unitizing alpha and gamma depend on: {escape(where)}.</p>")
        parts.append(f"<h3>{escape(str(name))}</h3>{counted}{table}<h3>{escape(str(name))}: per label</h3>"
                     f'<div class="pair"><div>{per_label}</div><div>{pair_table}</div></div>'
                     f"<h3>{escape(str(name))}: boundaries of matched spans</h3>{about}{chart}")
    return "".join(parts)


def _annotators(report: Report) -> str:
    parts = [('<p class="note">Cohen\'s kappa of every pair of annotators on the items both labeled (hover a cell '
             "for how many). Beside it: each annotator's items, their mean kappa with the others (weighted by the "
             "items each pair shares), and their agreement with the majority of the others (on items where at "
             "least two others have one). <em>Outlier</em> (the row in red): a mean kappa below 0, agreeing with "
             "the others less often than chance would (Landis &amp; Koch 1977), or more than 2 scaled median "
             "absolute deviations below the annotators' median (Leys et al. 2013). <em>Compared</em>, the items "
             "another annotator labelled too (what the mean kappa and the majority rest on), is shown where it "
             "differs from the items.</p>")]
    for name, part in report.annotators.groupby("control", sort=False):
        people = list(part["name"])
        heatmap = _chart(charts.heatmap_figure(report.pairwise[report.pairwise["control"] == name], people,
                                               control=str(name)))
        compared = bool((part["n_compared"] != part["n_items"]).any())
        columns = [("name", "annotator"), ("n_items", "items"), *([("n_compared", "compared")] if compared else []),
                   ("mean_pairwise", "mean kappa"), ("with_majority", "with majority"), ("outlier", "outlier")]
        table = _table(part, columns, text=("name",), row_class=lambda r: "outlier" if r["outlier"] else "")
        parts.append(f'<h3>{escape(str(name))}</h3><div class="pair"><div>{heatmap}</div><div>{table}</div></div>')
    return "".join(parts)


def _references(report: Report) -> str:
    """Annotators against the ground truth and each model version; model versions against the annotators."""
    if report.references.empty:
        return ""
    threshold = report.overview.get("min_gt_accuracy")
    parts = [('<p class="note">Each annotator against the references on the items both labelled: the ground '
              "truth (imported, or marked by a reviewer: never the reference for its own author) and each model "
              "version's latest prediction. Accuracy is the share of items with the reference's label, with "
              "Wilson's 95% interval; kappa is Cohen's (quadratic-weighted for ordered controls), with the "
              "Fleiss-Cohen-Everitt interval. <em>with others</em> is the annotator's agreement with the other "
              "annotators on the same tasks: far below the agreement with a model, it suggests predictions "
              "accepted without looking.</p>")]
    below = report.references[report.references["below_min"].astype(bool)]
    if threshold is not None:
        named = ", ".join(escape(f"{r.name} ({r.control})") for r in below.itertuples()) or "none"
        parts.append(f'<p class="{"flag" if len(below) else ""}">Below the least accuracy against the ground truth '
                     f"({float(threshold):.2f}): {named}.</p>")
    columns = [("reference", "reference"), ("name", "annotator"), ("n_items", "items"), ("accuracy", "accuracy"),
               ("accuracy_ci", "accuracy, 95% interval"), ("agreement", "weighted"), ("kappa", "kappa"),
               ("kappa_ci", "kappa, 95% interval"), ("with_others", "with others")]
    for name, part in report.references.groupby("control", sort=False):
        weighted = bool((part["agreement"].astype(float) != part["accuracy"].astype(float)).any())
        chart = _chart(charts.reference_figure(part, control=str(name), weighted=weighted,
                                               threshold=float(threshold) if threshold is not None else None))
        shown = part.assign(accuracy_ci=[_interval(lo, hi) for lo, hi in zip(part["accuracy_low"],
                                                                               part["accuracy_high"], strict=True)],
                            kappa_ci=[_interval(lo, hi) for lo, hi in zip(part["kappa_low"], part["kappa_high"],
                                                                          strict=True)])
        table = _table(shown, columns, text=("reference", "name"),
                       cell={"accuracy_ci": str, "kappa_ci": str,
                             "reference": lambda r: f'<span class="nowrap">{escape(str(r))}</span>'},
                       row_class=lambda r: "outlier" if r["below_min"] else "")
        parts.append(f'<h3>{escape(str(name))}</h3><div class="pair"><div>{chart}</div><div>{table}</div></div>')
    if len(report.models):
        parts.append('<h3>Model versions against the annotators</h3><p class="note">A model version\'s mean kappa '
                     "against the annotators beside the annotators' mean pairwise kappa on the same tasks (the "
                     "ceiling a model can be held to), and its agreement with the annotators' majority (items with "
                     "one most frequent label among two or more).</p>")
        parts.append(_table(report.models, [("control", "control"), ("model", "model"), ("n_tasks", "tasks"),
                                            ("kappa_mean", "kappa vs annotators"),
                                            ("human_kappa_mean", "annotators' kappa"), ("ratio", "ratio"),
                                            ("majority_items", "majority items"),
                                            ("majority_accuracy", "with majority"),
                                            ("majority_kappa", "kappa vs majority")], text=("control", "model")))
        matrices = []
        for (control, model), part in report.model_confusion.groupby(["control", "model"], sort=False):
            order = charts.ordered([*part["majority_label"], *part["model_label"]])
            full = pd.MultiIndex.from_product([order, order], names=["first", "second"])
            counts = part.groupby(["model_label", "majority_label"])["n_items"].sum()
            counts.index.names = ["first", "second"]
            frame = counts.reindex(full, fill_value=0).rename("coincidences").reset_index()
            title = f"{control}\nmodel {model}"  # two lines: a long version's name is not clipped
            matrices.append(f"<div>{_chart(charts.confusion_figure(frame, control=title, counts='items'))}"
                            '<p class="note">rows: the model; columns: the annotators\' majority.</p></div>')
        parts.append(f'<div class="pair">{"".join(matrices)}</div>')
    return "".join(parts)


def _prior_note(prior: Sequence[float]) -> str:
    """What the report says of the confusion prior in use (``--consensus-prior``)."""
    a, b = (float(value) for value in prior)
    if a == b == 0:
        return "Each matrix is its maximum-likelihood estimate (<code>--consensus-prior 0,0</code>)."
    return (f"Each matrix carries a prior (<code>--consensus-prior {a:g},{b:g}</code>: {a:g} pseudo-counts on the "
            f"diagonal, {b:g} shared among the other labels), so that a few items make nobody certainly right or "
            f"wrong: an annotator right on all of n items of a true label has that row's diagonal at "
            f"(n + {a:g}) / (n + {a + b:g}) where they used every label.")


def _consensus(report: Report) -> str:
    """Whom to trust per control, the least trusted annotators' confusion, and the least certain tasks."""
    if report.consensus.empty:
        return ""
    parts = [('<p class="note">Each task\'s consensus label weighs its annotators by how reliable they are: '
              "Dawid-Skene (1979) estimates, without ground truth, each annotator's confusion matrix and from it "
              "the probability that their label is the true one (<em>fit's accuracy</em>: the matrix's diagonal "
              "weighted by the true labels of the items they answered, the expected share of their "
              "<em>answers</em> that are right; a model's estimate from how the annotators agree, not a count "
              "of right answers). " + _prior_note(report.overview["consensus_prior"])
              + " Where ground truth covers some of their items, their <em>accuracy on "
              "ground truth</em> is beside it: the share of those items where they gave its label, the same "
              "figure over the same items as in Against references. A task's <em>posterior</em> is the "
              "probability of its consensus label (majority vote: its share of the votes); a low one means the "
              "annotators the model trusts disagree. A label set's consensus gives each label's probability, and "
              "when no label is above 0.5, says so; a span control's gives each span's position.</p>")]
    columns = [("name", "annotator"), ("n_answers", "answers"),  # the note above says what each one is
               ("accuracy", "fit's accuracy"), ("ground_truth_accuracy", "accuracy on ground truth"),
               ("n_ground_truth", "ground-truth items")]
    for name, part in report.consensus.groupby("control", sort=False):
        method = str(part["method"].iloc[0])
        chart = _chart(charts.trust_figure(part, control=str(name))) if method == "dawid-skene" else ""
        table = _table(part, columns, text=("name",))
        parts.append(f'<h3>{escape(str(name))} <span class="small">{escape(method)}</span></h3>'
                     f'<div class="pair"><div>{chart}</div><div>{table}</div></div>')
        cells = report.consensus_confusion[report.consensus_confusion["control"] == name]
        matrices = [f"<div>{_chart(charts.probability_figure(one, title=f'{name}: {charts.short_name(who)}'))}</div>"
                    for who, one in cells.groupby("name", sort=False)]
        if matrices:
            parts.append('<p class="note">The annotators trusted least: how often they give each label (columns) '
                         "when the true label is the row's.</p>" + f'<div class="pair">{"".join(matrices)}</div>')
        suffix = "" if f"posterior:{name}" not in report.tasks.columns else f":{name}"
        if f"posterior{suffix}" in report.tasks.columns:
            uncertain = (report.tasks[report.tasks["n_annotations"] >= 2]
                         .sort_values(f"posterior{suffix}", kind="stable", na_position="last").head(10))
            uncertain = uncertain[uncertain[f"posterior{suffix}"].notna()]
            parts.append("<p>The tasks whose consensus is least certain:</p>"
                         + _table(uncertain, [("task", "task"), ("link", "in Label Studio"),
                                              (f"consensus{suffix}", "consensus"), (f"posterior{suffix}", "posterior"),
                                              ("n_annotations", "annotations")],
                                  text=(f"consensus{suffix}", "link"), cell={"link": _link,
                                                                              "task": lambda t: str(int(t))}))
    return "".join(parts)


def _labels(report: Report) -> str:
    parts = [('<p class="note">Krippendorff\'s coincidences: how often two annotators gave these two labels to the '
             "same item. Off the diagonal: the labels they confuse. Each matrix is coloured linearly from 0 to its "
             f"largest count, which it writes in each cell up to {charts.MAX_WRITTEN} labels a side.</p>")]
    charts_ = [f"<div>{_chart(charts.confusion_figure(part, control=str(name)))}</div>"
               for name, part in report.confusion.groupby("control", sort=False)]
    return "".join(parts) + f'<div class="pair">{"".join(charts_)}</div>'



def _flagged(report: Report) -> str:
    flagged = report.tasks[report.tasks["flagged"]]
    shown = flagged.head(report.options.max_listed_tasks)
    table = _table(shown, [("task", "task"), ("link", "in Label Studio"), ("n_annotations", "annotations"),
                           ("flagged_by", "flagged by"), ("flagged_value", "its value"), ("reasons", "why")],
                   text=("flagged_by", "reasons", "link"), cell={"link": _link, "task": lambda t: str(int(t))})
    more = (f'<p class="note">The first {len(shown):,} of {len(flagged):,}; the CSV and JSON formats list all.</p>'
            if len(flagged) > len(shown) else "")
    return (f"<p>{len(flagged):,} tasks flagged: {escape(report.overview['flag_rule'])}. They are listed in the "
            "order a review changes the most: the lowest score first (the task's lowest control value), then the "
            "least certain consensus, then the fewest annotations, as the \"Low agreement\" tab sorts them with "
            "--mirror-to-data. Each names the control that flagged it, that control's value, and what its annotators "
            f"gave.</p>{more}{table}")


def render_html(report: Report) -> str:
    """The report as one HTML document."""
    controls = list(report.headline["control"])
    body = {
        "headline": _headline(report),
        "time": ('<p class="note">SPA over the annotations made up to each moment (by creation time), with its '
                 "bootstrap interval as the band, and alpha dashed.</p>"
                 + _chart(charts.timeline_figure(report.timeline, controls=controls))),
        "family": _family(report),
        "spans": _spans(report),
        "annotators": _annotators(report),
        "references": _references(report),
        "consensus": _consensus(report),
        "labels": _labels(report),
        "tasks": ('<p class="note">Each task\'s score, the value its flag compares with the threshold: the lowest '
                  "over its controls of SPA, an ordered control's weighted agreement, or a span control's own value "
                  "(overlap F1 unless --span-flag-on says otherwise). Red: the tasks flagged; a red task right of "
                  "the line was flagged by another rule, which its reasons name.</p>"
                  + _chart(charts.distribution_figure(report.tasks, threshold=float(report.overview["threshold"])))),
        "sweep": ('<p class="note">The augmented kappa weighs an annotator\'s first choice p and the others 1 - p '
                  "(Rosenberg &amp; Binkowski 2004): at p = 1 it is Cohen's kappa on the first choices alone, at "
                  "p = 0.5 the first and the second choices count alike. Higher at p = 1: annotators agree more on "
                  "their first choice than on the set of choices; higher at p = 0.5: on the set more than on which "
                  "comes first. Under the chart, what this project's curves do.</p>"
                  + _chart(charts.sweep_figure(report.sweep)) if len(report.sweep) else ""),
        "flagged": _flagged(report),
        "notes": (_table(report.notes, [("kind", "kind"), ("control", "control"), ("message", "what")],
                         text=("kind", "control", "message")) if len(report.notes)
                  else "<p>Every result read was scored; no measure was undefined.</p>"),
    }
    nav = "".join(f'<a href="#{key}">{escape(title)}</a>' for key, title in SECTIONS if body[key])
    sections = "".join(f'<section id="{key}"><h2>{escape(title)}</h2>{body[key]}</section>'
                       for key, title in SECTIONS if body[key])
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(report.title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head>'
            f'<body><header><h1>Inter-annotator agreement: {escape(report.title)}</h1>'
            f'<p>{escape(report.source)} &middot; generated {escape(report.generated_at)} by ls-agreement</p>'
            f'</header><nav>{nav}</nav><main>{sections}</main></body></html>')
