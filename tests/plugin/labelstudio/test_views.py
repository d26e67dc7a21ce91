"""The Data Manager tabs the client keeps, against an in-memory stand-in for Label Studio's views API."""

import json

import httpx

from plugin.keeper.tabs import FLAGGED_FILTER, ensure_review_tab
from plugin.labelstudio.client import DEFAULT_VIEW, LabelStudioClient
from plugin.settings import Connection, ReviewOptions

CONNECTION = Connection(url="http://ls.test", api_key="0123456789abcdef0123456789abcdef01234567", retries=1)


class Views:
    """Label Studio's ``/api/dm/views`` over a dict of views, each request counted by method."""

    def __init__(self, views=()):
        self.views = {i + 1: dict(view) for i, view in enumerate(views)}
        self.requests = []

    def __call__(self, request):
        self.requests.append(request.method)
        if request.method == "GET":
            project = int(request.url.params["project"])
            return httpx.Response(200, json=[{"id": i, **v} for i, v in self.views.items() if v["project"] == project])
        body = json.loads(request.content)
        if request.method == "POST":
            identifier = max(self.views, default=0) + 1
            self.views[identifier] = {"project": body["project"], "data": body["data"]}
            return httpx.Response(201, json={"id": identifier, **self.views[identifier]})
        identifier = int(request.url.path.strip("/").split("/")[-1])
        self.views[identifier]["data"] = body["data"]
        return httpx.Response(200, json={"id": identifier, **self.views[identifier]})


def client(views):
    return LabelStudioClient(CONNECTION, httpx_client=httpx.Client(transport=httpx.MockTransport(views)),
                             sleep=lambda _: None)


def test_a_project_without_a_tab_gets_a_default_tab_of_every_task_first_and_only_once():
    views = Views()
    review = ReviewOptions(mirror_to_data=True)
    first = ensure_review_tab(client(views), 1, review)
    assert views.requests == ["GET", "POST", "POST"]  # the tabs listed, "Default" created, then the review tab
    assert [v["data"]["title"] for v in views.views.values()] == ["Default", "Low agreement"]
    assert views.views[1]["data"] == dict(DEFAULT_VIEW)
    assert views.views[1]["data"]["filters"] == {"conjunction": "and", "items": []}  # every task
    tab = views.views[first]["data"]
    assert tab["filters"] == FLAGGED_FILTER and tab["ordering"] == ["tasks:data.agreement_score"]
    assert tab["columnsDisplayType"] == {"tasks:data.agreement_score": "Number"}  # sorted as a number, not as text
    views.requests.clear()
    assert ensure_review_tab(client(views), 1, review) == first  # every pass after: listed and updated, no more
    assert views.requests == ["GET", "PATCH"] and len(views.views) == 2


def test_a_project_with_a_tab_of_its_own_gets_no_default_tab():
    views = Views([{"project": 1, "data": {"title": "Mine", "filters": {"conjunction": "and", "items": []}}},
                   {"project": 2, "data": {"title": "Other project's"}}])
    ensure_review_tab(client(views), 1, ReviewOptions())
    assert views.requests == ["GET", "POST"]
    assert [(v["project"], v["data"]["title"]) for v in views.views.values()] == [
        (1, "Mine"), (2, "Other project's"), (1, "Low agreement")]
    assert "columnsDisplayType" not in views.views[3]["data"]  # without the mirrored score, sorted by id
    assert views.views[3]["data"]["ordering"] == ["tasks:id"]
