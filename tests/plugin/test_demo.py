"""The demo: its reads of Label Studio (the SDK on a fake transport: no page past the last), and what it prints."""

from pathlib import Path

import httpx
import pytest
from label_studio_sdk import LabelStudio

from plugin.demo import WIDTH, _every_item, _tasks, live_report_text, progress_lines, score_lines


def sdk(handler):
    return LabelStudio(base_url="http://ls.test", api_key="0123456789abcdef0123456789abcdef01234567",
                       httpx_client=httpx.Client(transport=httpx.MockTransport(handler)))


def pages(items, key, total, calls, *, cap=None):
    """Label Studio's pages of ``items`` (``key`` their list, ``total`` their count): 404 past the last."""
    def handler(request):
        page, size = int(request.url.params["page"]), int(request.url.params["page_size"])
        size = min(size, cap or size)
        calls.append((request.url.path, page, size))
        chunk = items[(page - 1) * size: page * size]
        if page > 1 and not chunk:
            return httpx.Response(404, json={"detail": "Invalid page."})
        return httpx.Response(200, json={key: chunk, total: len(items)})
    return handler


@pytest.mark.parametrize(("n_tasks", "pages_read"), [(0, 1), (300, 1), (1000, 1), (1001, 2), (2000, 2)])
def test_the_demo_reads_its_tasks_without_asking_for_a_page_past_the_last(n_tasks, pages_read):
    tasks = [{"id": i, "data": {}, "meta": {}, "is_labeled": False} for i in range(1, n_tasks + 1)]
    calls = []
    read = [t.id for t in _tasks(sdk(pages(tasks, "tasks", "total", calls)), 3)]
    assert read == list(range(1, n_tasks + 1))
    assert calls == [("/api/tasks/", page, 1000) for page in range(1, pages_read + 1)]


@pytest.mark.parametrize(("n_projects", "cap", "pages_read"), [(0, None, 1), (1, None, 1), (100, None, 1),
                                                               (101, None, 2), (100, 30, 4)])
def test_the_demo_reads_the_project_list_without_asking_for_a_page_past_the_last(n_projects, cap, pages_read):
    projects = [{"id": i, "title": f"p{i}"} for i in range(1, n_projects + 1)]
    calls = []
    client = sdk(pages(projects, "results", "count", calls, cap=cap))
    assert [p.id for p in _every_item(client.projects.list(page_size=100), "count")] == list(range(1, n_projects + 1))
    assert [page for _, page, _ in calls] == list(range(1, pages_read + 1))

LONG_NAMES = ("customer_sentiment_overall", "product_topics_mentioned_in_review", "named_entities_people_and_orgs",
              "helpfulness_rating_for_other_shoppers", "a_control_whose_name_runs_on_and_on_past_any_terminal_width"
              "_to_the_very_end_of_the_line")


def status_of(names, *, spa=0.123456789, undefined=()):
    return {"controls": {name: {"tag": "Choices", "level": "nominal", "n_items": 300,
                                "spa": None if name in undefined else spa,
                                "ci": None if name in undefined else [0.1, 0.98765],
                                "alpha": None if name in undefined else -0.456789}
                         for name in names}}


@pytest.mark.parametrize("undefined", [(), LONG_NAMES[1:3]])
def test_every_progress_line_fits_100_columns_and_keeps_every_score(undefined):
    lines = progress_lines(status_of(LONG_NAMES, undefined=undefined), 1234.56, 12345)
    assert WIDTH == 100 and all(len(line) <= 100 for line in lines)
    assert lines[0].startswith("[1234.6 s] 12345 annotations")
    text = "\n".join(lines)
    defined = [name for name in LONG_NAMES if name not in undefined]
    assert text.count("SPA 0.123 [0.100, 0.988] α -0.457") == len(defined)
    for name in LONG_NAMES[:4]:  # whole where they fit; the longest shortened in its middle
        assert f"{name}: " in text
    assert lines[-1] == ("    a_control_whose_name_runs_on_…dth_to_the_very_end_of_the_line: SPA 0.123 [0.100, 0.988] "
                         "α -0.457") and len(lines[-1]) == 100
    assert all(line.startswith("    ") for line in lines[1:])


def test_the_demos_own_controls_take_two_lines_of_progress():
    lines = progress_lines(status_of(("sentiment", "topics", "entities", "helpfulness")), 42.0, 87)
    assert lines == [
        "[ 42.0 s]   87 annotations | sentiment: SPA 0.123 [0.100, 0.988] α -0.457",
        "    topics: SPA 0.123 [0.100, 0.988] α -0.457 | entities: SPA 0.123 [0.100, 0.988] α -0.457",
        "    helpfulness: SPA 0.123 [0.100, 0.988] α -0.457",
    ]


def test_the_final_scores_are_as_precise_as_the_progress():
    (line,) = score_lines(status_of(("sentiment",)))
    assert line == "  sentiment  Choices  nominal  items  300  SPA 0.123 [0.100, 0.988]  alpha -0.457"
    (undefined,) = score_lines(status_of(("topics",), undefined=("topics",)))
    assert undefined.endswith("SPA - [-, -]  alpha -")


def test_the_live_report_is_given_as_the_address_a_browser_opens():
    text = live_report_text("http://127.0.0.1:9090", "Zx-9_secret", Path("/data/service.secret"))
    lines = text.splitlines()
    assert lines[1] == "  http://127.0.0.1:9090/s/Zx-9_secret/report"
    assert "demo's secret" in lines[0]
    # scripts: the header, with the secret read from its file (never written out)
    assert lines[3] == '  curl -s -H "X-Agreement-Secret: $(cat /data/service.secret)" http://127.0.0.1:9090/report'
