"""The demo's reads of Label Studio, against the SDK on a fake transport: no page past the last is asked for."""

import httpx
import pytest
from label_studio_sdk import LabelStudio

from plugin.demo import _every_item, _tasks


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
