"""The report as a browser shows it: headless Chromium renders it offline, draws it, and fetches nothing."""

from pathlib import Path

import numpy as np
import pytest

from plugin.demo import CONFIG, simulated_export
from plugin.mapping.labelconfig import parse_label_config
from plugin.report import build_report, write_report
from plugin.settings import MappingOptions, ScoringOptions
from plugin.state.project import ProjectState
from tests.browser import browser_page, ink


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    state = ProjectState(None, parse_label_config(CONFIG), mapping=MappingOptions(), scoring=ScoringOptions())
    state.load(simulated_export(300))
    report = build_report(state.snapshot(), source="simulated demo", generated_at="2026-11-22 12:00 UTC",
                          task_url="http://127.0.0.1:9/projects/1/data?task={task}")
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_report(report, path)
    return path, report


@pytest.mark.slow  # headless Chromium (Debian's, which `make test` installs): out of the unit tier
def test_chromium_draws_the_report_offline_with_its_tables(report_file, tmp_path):
    path, report = report_file
    requests = []
    with browser_page() as page:
        page.on("request", lambda request: requests.append(request.url))
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        headings = page.locator("h2").all_text_contents()
        family_rows = page.locator("#family table tbody tr").count()
        flagged_rows = page.locator("#flagged table tbody tr").count()
        cards = page.locator("#headline .card .name").all_text_contents()
        hover = page.locator("#annotators svg g[id^='cell-'] > title").first.text_content()
        svg_sizes = page.eval_on_selector_all("svg", "nodes => nodes.map(n => n.getBoundingClientRect().width)")
    # Nothing but the file itself was requested: no CDN, font or image from anywhere.
    assert requests == [path.as_uri()]
    assert headings[:3] == ["Headline", "Over time", "Per control and label"] and "Flagged tasks" in headings
    assert family_rows == len(report.family)
    assert flagged_rows == min(report.overview["flagged"], report.options.max_listed_tasks) > 0
    assert [c.split()[0] for c in cards] == list(report.headline["control"])
    assert "kappa" in hover and "shared items" in hover
    assert len(svg_sizes) >= 10 and min(svg_sizes) > 100  # every chart laid out with a real width
    # Not blank: a good share of the page is drawn, in many colours (charts, not only text).
    assert ink(shot) > 0.05
    from matplotlib.image import imread
    pixels = (imread(shot)[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    assert len(np.unique(pixels // 16, axis=0)) > 40


CHARTS = """() => Array.from(document.querySelectorAll('svg')).map(n => {
    const figure = n.closest('figure.chart'), caption = figure && figure.querySelector(':scope > figcaption');
    const box = n.getBoundingClientRect(), inner = n.getBBox();
    return {width: box.width, height: box.height, drawn: inner.width * inner.height,
            marks: n.querySelectorAll('path, use, text, image').length,
            caption: caption ? caption.textContent.trim() : null,
            shown: caption && getComputedStyle(caption).display !== 'none' ? caption.getBoundingClientRect().height
                                                                            : 0};
})"""


@pytest.mark.slow  # headless Chromium
def test_every_chart_loads_drawn_with_its_caption(report_file):
    """Each chart's image is laid out and drawn (not blank) in the browser, with its caption under it, shown."""
    from plugin.report.charts import sweep_caption

    path, report = report_file
    with browser_page() as page:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        found = page.evaluate(CHARTS)
        images = page.evaluate("Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)")
        shots = [ink(page.locator("svg").nth(i).screenshot()) for i in range(len(found))]
        sweep = page.locator("#sweep figcaption").text_content()
        over_time = page.locator("#time figcaption").text_content()
    assert len(found) >= 10 and all(images)  # no <img> that failed to load (the charts are inline SVG)
    for i, (chart, drawn) in enumerate(zip(found, shots, strict=True)):
        assert chart["width"] > 100 and chart["height"] > 100 and chart["drawn"] > 0 and chart["marks"] > 20, i
        assert drawn > 0.02, f"chart {i} is blank in the browser"
        assert chart["caption"] and chart["shown"] > 0, f"chart {i} has no caption shown"
    assert sweep.strip() == sweep_caption(report.sweep)
    assert over_time.startswith("Over 20 moments")


def test_the_report_file_is_small_enough_to_mail(report_file):
    path, _ = report_file
    assert Path(path).stat().st_size < 2 * 1024 * 1024


def _rgb(text):
    """``rgb(r, g, b)`` as three numbers 0-255."""
    return [float(v) for v in text[text.index("(") + 1: text.index(")")].split(",")[:3]]


def _luminance(rgb):
    """WCAG 2.1 relative luminance of a colour (0-255 channels)."""
    c = np.asarray(rgb, dtype=float) / 255
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2])


def _contrast(a, b):
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.fixture(scope="module", params=["demo", "ner"])
def lead_report(request, tmp_path_factory):
    """As a team lead gets it: the demo with its references, annotators known by long names and emails; and a real
    NER export of three annotators (130 tasks, tests/data/spans/SOURCE.md). Drawing it warns of nothing (before,
    matplotlib's "constrained_layout not applied" reached the terminal)."""
    import json
    import warnings

    from plugin.mapping.annotations import people_of_tasks

    if request.param == "demo":
        config, tasks = CONFIG, simulated_export(300, references=True)
        people = {str(i): f"Annotator Number{i} <annotator.number{i}@cs.arizona.edu>" for i in range(1, 6)}
    else:
        spans = Path(__file__).parents[2] / "data" / "spans"
        config = (spans / "leoka_config.xml").read_text()
        tasks = json.loads((spans / "leoka_team_2.json").read_text())
        people = people_of_tasks(tasks)
    state = ProjectState(None, parse_label_config(config), mapping=MappingOptions(),
                         scoring=ScoringOptions(min_gt_accuracy=0.7, min_gt_items=5))
    state.load(tasks)
    path = tmp_path_factory.mktemp("lead") / "report.html"
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        report = build_report(state.snapshot(), source="a team's project", generated_at="2026-11-22 12:00 UTC",
                              task_url="http://127.0.0.1:9/projects/1/data?task={task}", people=people,
                              title="Customer reviews")
        write_report(report, path)
    assert not [str(w.message) for w in said if issubclass(w.category, UserWarning)
                and "constrained_layout" in str(w.message)]
    return path


TEXTS = """() => Array.from(document.querySelectorAll('svg text')).map(t => {
    const box = t.getBoundingClientRect(), svg = t.closest('svg').getBoundingClientRect();
    const tick = t.closest('g[id^="xtick_"], g[id^="ytick_"]');
    return {text: t.textContent.trim(), fill: getComputedStyle(t).fill, x: box.x + scrollX, y: box.y + scrollY,
            w: box.width, h: box.height, svg: [svg.x + scrollX, svg.y + scrollY, svg.width, svg.height],
            tick: tick ? tick.id.split('_')[0] : null, chart: Array.from(document.querySelectorAll('svg'))
            .indexOf(t.closest('svg')) + ':' + (t.closest('g[id^="axes_"]') || {id: ''}).id};
})"""


@pytest.mark.slow  # headless Chromium
def test_the_report_reads_as_a_team_lead_reads_it(lead_report, tmp_path):
    """At 1280 px: nothing runs off the page's right edge, every number on a coloured cell has WCAG AA contrast
    (4.5:1), numeric axes are in order (a rating's 1..5, not 2, 3, 1, 4, 5), and no chart's text is cut."""
    with browser_page(width=1280, height=900) as page:
        page.goto(lead_report.as_uri())
        page.wait_for_load_state("load")
        width = page.evaluate("document.documentElement.scrollWidth")
        title = page.locator("header h1").text_content()
        texts = page.evaluate(TEXTS)
        names = page.locator("#annotators tbody td:first-child").all_text_contents()
        shot = tmp_path / "page.png"
        page.screenshot(path=str(shot), full_page=True)
    assert width <= 1280, f"the page is {width} px wide at 1280"
    assert title == "Inter-annotator agreement: Customer reviews"
    from matplotlib.image import imread
    pixels = (imread(shot)[..., :3] * 255).round()
    low_contrast, cut, unordered = [], [], []
    for t in texts:
        left, top, w, h = t["svg"]
        if t["w"] and (t["x"] < left - 1 or t["x"] + t["w"] > left + w + 1 or t["y"] < top - 1
                       or t["y"] + t["h"] > top + h + 1):
            cut.append(t["text"])
        if not t["text"].replace(".", "", 1).replace("-", "", 1).isdigit() or t["tick"]:
            continue
        x0, y0 = int(t["x"]) - 2, int(t["y"]) - 2
        x1, y1 = int(t["x"] + t["w"]) + 2, int(t["y"] + t["h"]) + 2
        ring = np.concatenate([pixels[y0, x0:x1], pixels[y1, x0:x1], pixels[y0:y1, x0], pixels[y0:y1, x1]])
        colours, counts = np.unique(ring, axis=0, return_counts=True)
        background = colours[counts.argmax()]
        if _luminance(background) < 0.95 and _contrast(_rgb(t["fill"]), background) < 4.5:  # on a coloured cell
            low_contrast.append((t["text"], t["fill"], background.tolist()))
    for chart in {t["chart"] for t in texts}:  # each axes of each chart (a colorbar is an axes of its own)
        for axis, along in (("xtick", "x"), ("ytick", "y")):
            ticks = sorted((t[along], t["text"]) for t in texts if t["chart"] == chart and t["tick"] == axis)
            if any(name.startswith(text.rstrip("\u2026")) for _, text in ticks for name in names if text):
                continue  # an axis of annotators (their ids may be numbers): in the table's order
            try:
                values = [float(text.replace("\u2212", "-")) for _, text in ticks]
            except ValueError:
                continue
            if values != sorted(values) and values != sorted(values, reverse=True):
                unordered.append((chart, axis, values))
    assert not cut, f"text cut at a chart's edge: {cut[:5]}"
    assert not low_contrast, f"numbers below 4.5:1 on their cells: {low_contrast[:5]}"
    assert not unordered, f"numeric axes out of order: {unordered[:3]}"
