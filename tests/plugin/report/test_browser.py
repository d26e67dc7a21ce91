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


def test_the_report_file_is_small_enough_to_mail(report_file):
    path, _ = report_file
    assert Path(path).stat().st_size < 2 * 1024 * 1024
