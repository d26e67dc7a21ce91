"""The Label Studio client against an injected fake HTTP transport: paging, retries, errors."""

import json
from dataclasses import replace

import httpx
import pytest

from plugin.keeper.sync import sync_project
from plugin.labelstudio.client import TOKEN_HINT, LabelStudioClient, LabelStudioError
from plugin.settings import Connection, MappingOptions, ScoringOptions

CONNECTION = Connection(url="http://ls.test", api_key="0123456789abcdef0123456789abcdef01234567", page_size=2,
                        retries=3, backoff=0.01)


def fake(handler):
    return LabelStudioClient(CONNECTION, httpx_client=httpx.Client(transport=httpx.MockTransport(handler)),
                             sleep=lambda _: None)


def page_handler(tasks, calls):
    def handler(request):
        calls.append(request)
        if request.url.path == "/api/tasks/":
            page, size = int(request.url.params["page"]), int(request.url.params["page_size"])
            chunk = tasks[(page - 1) * size: page * size]
            if not chunk and page > 1:  # as Label Studio answers (an empty project's first page is empty)
                return httpx.Response(404, json={"detail": "Invalid page."})
            return httpx.Response(200, json={"tasks": chunk, "total": len(tasks)})
        if request.url.path.startswith("/api/dm/views"):  # the review tab
            return httpx.Response(200, json=[] if request.method == "GET" else {"id": 1, "project": 1, "data": {}})
        if request.method == "GET" and request.url.path.startswith("/api/tasks/"):
            wanted = int(request.url.path.strip("/").split("/")[-1])
            found = [t for t in tasks if t["id"] == wanted]
            return httpx.Response(200, json=found[0]) if found else httpx.Response(404, json={"detail": "Not found."})
        return httpx.Response(404)
    return handler


def test_tasks_are_read_page_by_page_with_the_legacy_token():
    tasks = [{"id": i, "data": {}, "annotations": [], "meta": {}} for i in range(1, 6)]
    calls, totals = [], []
    client = fake(page_handler(tasks, calls))
    assert [t["id"] for t in client.tasks(7, on_total=totals.append)] == [1, 2, 3, 4, 5]
    assert totals == [5]
    assert calls[0].headers["authorization"] == f"Token {CONNECTION.api_key}"
    assert calls[0].url.params["project"] == "7" and calls[0].url.params["page_size"] == "2"


def test_writes_are_retried_on_5xx_and_timeouts():
    attempts = []

    def handler(request):
        attempts.append(request)
        if len(attempts) == 1:
            raise httpx.ReadTimeout("slow", request=request)
        if len(attempts) == 2:
            return httpx.Response(502, text="bad gateway")
        return httpx.Response(200, json={"id": 3, "meta": json.loads(request.content)["meta"]})

    fake(handler).update_meta(3, {"agreement": {"spa": 1.0}})
    assert len(attempts) == 3
    assert attempts[-1].method == "PATCH" and attempts[-1].url.path == "/api/tasks/3/"
    assert dict(attempts[-1].url.params) == {"review": "true"}  # Label Studio finds the task the light way


def test_a_refused_key_is_a_clear_error_without_retries():
    attempts = []

    def handler(request):
        attempts.append(request)
        return httpx.Response(401, json={"detail": "Invalid token."})

    with pytest.raises(LabelStudioError) as refused:
        fake(handler).label_config(1)
    assert len(attempts) == 1
    # Label Studio's detail and what to do, not its JSON ({"id": ..., "status_code": 401, ... "exc_info": null})
    assert str(refused.value).startswith("Label Studio refused the API key (401) on GET /api/projects/1/: Invalid "
                                         "token. A personal access token expires: make a new one")
    assert "{" not in str(refused.value)


def test_an_expired_personal_access_token_is_one_line_saying_how_to_get_another():
    import jwt

    expired = jwt.encode({"exp": 1, "token_type": "refresh"}, "a-key-of-32-bytes-or-more-for-hs256", algorithm="HS256")
    with pytest.raises(LabelStudioError) as refused:  # the SDK refuses it before any request: before, a traceback
        LabelStudioClient(replace(CONNECTION, api_key=expired))
    assert str(refused.value) == ("Label Studio refused the API key (401): API key has expired. Please obtain a new "
                                  f"refresh token. {TOKEN_HINT}")


def test_a_task_that_keeps_failing_is_reported_and_the_run_goes_on():
    tasks = [{"id": i, "meta": {"keep": i}, "annotations": [
        {"id": 10 * i + a, "completed_by": a, "result": [
            {"from_name": "s", "type": "choices", "value": {"choices": ["x" if a == 1 else "y"]}}]} for a in (1, 2)]}
        for i in (1, 2)]
    writes = []

    def handler(request):
        if request.url.path.startswith("/api/projects/"):
            return httpx.Response(200, json={"id": 1, "label_config": '<View><Choices name="s" toName="t">'
                                             '<Choice value="x"/><Choice value="y"/></Choices></View>'})
        if request.method == "PATCH":
            task = int(request.url.path.strip("/").split("/")[-1])
            if task == 1:
                return httpx.Response(500, text="boom")
            writes.append((task, json.loads(request.content)["meta"]))
            return httpx.Response(200, json={"id": task})
        return page_handler(tasks, [])(request)

    report = sync_project(fake(handler), 1, None, mapping=MappingOptions(), scoring=ScoringOptions(n_resamples=50),
                          retry_delays=())
    assert report.tasks_written == 1
    assert report.failures == [(1, "Label Studio answered 500 to PATCH /api/tasks/1/: boom.")]
    (task, meta), = writes
    assert task == 2 and meta["keep"] == 2 and meta["agreement"]["spa"] == 0.0


def test_a_failed_page_is_retried_and_the_read_goes_on():
    tasks = [{"id": i, "data": {}, "annotations": [], "meta": {}} for i in range(1, 6)]
    serve = page_handler(tasks, [])
    failed = []

    def handler(request):
        if request.url.params.get("page") == "2" and len(failed) < 2:
            failed.append(request)
            return httpx.Response(503, text="<html>maintenance</html>")
        return serve(request)

    assert [t["id"] for t in fake(handler).tasks(7)] == [1, 2, 3, 4, 5]
    assert len(failed) == 2


def test_an_answer_that_is_not_json_is_retried_and_described_in_one_line():
    answers = []

    def handler(request):
        answers.append(request)
        return httpx.Response(200, text="<html>\n<body>Please log in to the network</body>\n</html>")

    client = fake(handler)
    with pytest.raises(LabelStudioError) as error:
        client.task(3)
    assert str(error.value) == "Label Studio's answer to GET /api/tasks/3/ (200) was not JSON: Please log in to the network"
    assert len(answers) == CONNECTION.retries + 1 and "\n" not in str(error.value)
    assert client.reachability.unreachable_for() > 0


def test_a_page_is_read_as_label_studio_wrote_it():
    # the page's JSON as it is: fields the SDK's models do not declare, and tasks that are not objects, reach the
    # state, which counts what it cannot use (one request a page: no model is built and dumped back)
    tasks = [{"id": 1, "data": {"text": "a"}, "annotations": [], "meta": {}, "field_of_a_newer_label_studio": [1]},
             ["not", "a", "task"]]
    calls = []
    assert list(fake(page_handler(tasks, calls)).tasks(7)) == tasks
    assert len(calls) == 1 and calls[0].url.params["fields"] == "all" and "query" not in calls[0].url.params


@pytest.mark.parametrize(("read", "answer", "message"), [
    ("page", httpx.Response(200, text="<html><body>Please log in</body></html>"),
     r"answer to GET /api/tasks/ \(200\) was not JSON: Please log in$"),
    ("page", httpx.Response(200, json=[{"id": 1}]), r"was not a page of tasks: \[\{"),
    ("page", httpx.Response(200, json={"detail": "maintenance"}), "was not a page of tasks"),
    ("task", httpx.Response(200, json={"id": 13, "data": {}}), r"was not a task: \{\"id\":13"),
    ("task", httpx.Response(200, json=[{"id": 12}]), r"was not a task: \[\{"),
    ("task", httpx.Response(200, text="<html>Please log in</html>"), "to GET /api/tasks/12/ .* was not JSON: Please log in$"),
])
def test_an_answer_that_is_not_what_was_asked_for_is_retried_and_described_in_one_line(read, answer, message):
    # a page of tasks, or task 12 alone (the read before a late write)
    answers = []

    def handler(request):
        answers.append(request)
        return answer

    client = fake(handler)
    with pytest.raises(LabelStudioError, match=message) as error:
        list(client.tasks(7)) if read == "page" else client.task(12)
    assert len(answers) == CONNECTION.retries + 1 and "\n" not in str(error.value)
    assert client.reachability.unreachable_for() > 0


def test_a_refused_page_read_is_one_error_without_retries():
    answers = []

    def handler(request):
        answers.append(request)
        return httpx.Response(403, json={"detail": "You do not have permission to perform this action."})

    with pytest.raises(LabelStudioError, match=r"refused the API key \(403\) on GET /api/tasks/: .*permission"):
        list(fake(handler).tasks(7))
    assert len(answers) == 1


def test_a_deleted_task_reads_as_none():
    assert fake(page_handler([], [])).task(12) is None


def test_a_task_is_read_as_label_studio_wrote_it():
    task = {"id": 12, "data": {"text": "a"}, "annotations": [{"id": 3, "result": [{"odd": [1]}]}], "meta": {},
            "field_of_a_newer_label_studio": {"x": 1}}
    calls = []
    assert fake(page_handler([task], calls)).task(12) == task
    assert [call.url.path for call in calls] == ["/api/tasks/12/"]


def test_a_connection_closed_as_it_was_reused_is_sent_again_at_once_without_counting_as_unreachable():
    attempts, sleeps = [], []

    def handler(request):
        attempts.append(request)
        if len(attempts) == 1:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
        return httpx.Response(200, json={"id": 3, "meta": json.loads(request.content)["meta"]})

    client = LabelStudioClient(CONNECTION, httpx_client=httpx.Client(transport=httpx.MockTransport(handler)),
                               sleep=sleeps.append)
    client.update_meta(3, {"agreement": {"spa": 1.0}})
    assert len(attempts) == 2 and sleeps == [] and client.reachability.last_error is None


def test_a_connection_closed_again_and_again_falls_back_to_the_usual_retries():
    attempts, sleeps = [], []

    def handler(request):
        attempts.append(request)
        raise httpx.ReadError("Connection reset by peer", request=request)

    client = LabelStudioClient(CONNECTION, httpx_client=httpx.Client(transport=httpx.MockTransport(handler)),
                               sleep=sleeps.append)
    with pytest.raises(LabelStudioError, match=r"^Label Studio at http://ls.test closed the connection during PATCH "
                                               r"/api/tasks/3/: connection reset by peer\.$"):
        client.update_meta(3, {"agreement": {}})
    assert len(attempts) == CONNECTION.retries + 1 and sleeps == [0.01, 0.02]


def _pages_asked(calls, path="/api/tasks/"):
    return [(int(c.url.params["page"]), int(c.url.params["page_size"])) for c in calls if c.url.path == path]


@pytest.mark.parametrize(("n_tasks", "pages"), [(0, 1), (1, 1), (2, 1), (3, 2), (4, 2), (6, 3)])
def test_a_read_asks_for_no_page_past_the_last_one(n_tasks, pages):
    # Label Studio answers a page past the last with 404 "Invalid page." and logs a traceback: a number of tasks
    # that is a multiple of the page size (4 in pages of 2) is the case where a reader asks for one
    tasks = [{"id": i, "data": {}, "annotations": [], "meta": {}} for i in range(1, n_tasks + 1)]
    calls = []
    assert [t["id"] for t in fake(page_handler(tasks, calls)).tasks(7)] == list(range(1, n_tasks + 1))
    assert _pages_asked(calls) == [(page, 2) for page in range(1, pages + 1)]


def test_pages_smaller_than_asked_for_are_read_to_the_total():
    # TASK_API_PAGE_SIZE_MAX caps the page size Label Studio applies: a short page is not the last one then
    tasks = [{"id": i, "data": {}, "annotations": [], "meta": {}} for i in range(1, 8)]
    calls = []

    def handler(request):
        calls.append(request)
        page = int(request.url.params["page"])
        return httpx.Response(200, json={"tasks": tasks[(page - 1) * 3: page * 3], "total": len(tasks)})

    client = LabelStudioClient(replace(CONNECTION, page_size=5),
                               httpx_client=httpx.Client(transport=httpx.MockTransport(handler)))
    assert [t["id"] for t in client.tasks(7)] == list(range(1, 8)) and len(calls) == 3


def changed_handler(tasks, calls):
    """Pages of ``tasks`` newest first (by ``updated_at``), as the Data Manager orders a read of changed tasks."""
    ordered = sorted(tasks, key=lambda t: t["updated_at"], reverse=True)

    def handler(request):
        calls.append(request)
        assert json.loads(request.url.params["query"]) == {"ordering": ["-tasks:updated_at"]}
        page, size = int(request.url.params["page"]), int(request.url.params["page_size"])
        chunk = ordered[(page - 1) * size: page * size]
        if not chunk and page > 1:
            return httpx.Response(404, json={"detail": "Invalid page."})
        return httpx.Response(200, json={"tasks": chunk, "total": len(tasks)})
    return handler


@pytest.mark.parametrize(("changed", "pages"), [
    (0, [(1, 10)]), (9, [(1, 10)]),  # an idle pass, and a few changed tasks: the probe alone
    (10, [(1, 10), (1, 50)]), (60, [(1, 10), (1, 50), (2, 50)]),  # more: pages of the page size, from the first
    (100, [(1, 10), (1, 50), (2, 50)]),  # every task changed: 100 in pages of 50, no third
])
def test_a_read_of_changed_tasks_asks_first_for_a_small_page(changed, pages):
    from datetime import UTC, datetime, timedelta

    since = datetime(2026, 1, 1, tzinfo=UTC)
    tasks = [{"id": i, "annotations": [], "meta": {},
              "updated_at": (since + timedelta(seconds=i if i <= changed else -i)).isoformat()}
             for i in range(1, 101)]
    calls, totals = [], []
    client = LabelStudioClient(replace(CONNECTION, page_size=50),
                               httpx_client=httpx.Client(transport=httpx.MockTransport(changed_handler(tasks, calls))))
    read = [t["id"] for t in client.tasks(7, updated_after=since, on_total=totals.append)]
    assert read == list(range(changed, 0, -1))  # each changed task once, newest first
    assert _pages_asked(calls) == pages and totals == [100]  # the project's task count, from the first page


def project_handler(n_projects, calls, *, cap=100):
    def handler(request):
        calls.append(request)
        assert request.url.path == "/api/projects/" and request.url.params["include"] == "id"
        page, size = int(request.url.params["page"]), min(int(request.url.params["page_size"]), cap)
        chunk = [{"id": i} for i in range(1, n_projects + 1)][(page - 1) * size: page * size]
        if page > 1 and not chunk:
            return httpx.Response(404, json={"detail": "Invalid page."})
        return httpx.Response(200, json={"count": n_projects, "next": "http://ls.test/api/projects/?page=2"
                                         if page * size < n_projects else None, "previous": None, "results": chunk})
    return handler


@pytest.mark.parametrize(("n_projects", "cap", "pages"), [(0, 100, 1), (1, 100, 1), (100, 100, 1), (101, 100, 2),
                                                          (200, 100, 2), (100, 30, 4)])
def test_the_project_list_asks_for_no_page_past_the_last_one(n_projects, cap, pages):
    calls = []
    assert fake(project_handler(n_projects, calls, cap=cap)).project_ids() == list(range(1, n_projects + 1))
    assert _pages_asked(calls, "/api/projects/") == [(page, 100) for page in range(1, pages + 1)]


def test_a_failed_page_of_the_project_list_is_retried_on_its_own():
    calls, failed = [], []
    serve = project_handler(150, calls)

    def handler(request):
        if request.url.params["page"] == "2" and not failed:
            failed.append(request)
            return httpx.Response(502, text="bad gateway")
        return serve(request)

    assert fake(handler).project_ids() == list(range(1, 151))
    assert _pages_asked(calls, "/api/projects/") == [(1, 100), (2, 100)] and len(failed) == 1


DJANGO_500 = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta http-equiv="content-type" content="text/html; charset=utf-8">
  <title>OperationalError
          at /api/tasks/</title>
  <style>body { font: small sans-serif; }</style>
</head>
<body><div id="summary"><h1>OperationalError at /api/tasks/</h1><pre>database is locked</pre></div>
""" + "<p>traceback line</p>\n" * 2000 + "</body></html>"


@pytest.mark.parametrize(("page", "said"), [
    (DJANGO_500, "OperationalError at /api/tasks/"),  # Django's debug page: its title
    ("<html><head></head><body>\n<h1>Server  Error (500)</h1><p></p></body></html>", "Server Error (500)"),
    ("<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>",
     "502 Bad Gateway"),
])
def test_an_error_page_is_one_line_with_the_status_the_request_and_the_page_title(page, said):
    def handler(request):
        return httpx.Response(500 if "Gateway" not in page else 502, text=page,
                              headers={"content-type": "text/html"})

    client = fake(handler)
    with pytest.raises(LabelStudioError) as error:
        list(client.tasks(7))
    status = 502 if "Gateway" in page else 500
    expected = f"Label Studio answered {status} to GET /api/tasks/: {said}."
    # what /status shows as last_error, and what the command and the logs say
    assert str(error.value) == expected and client.reachability.last_error == expected


def test_what_label_studio_said_is_cut_short():
    client = fake(lambda request: httpx.Response(400, json={"detail": "x" * 1000}))
    with pytest.raises(LabelStudioError) as error:
        client.update_meta(4, {})
    assert str(error.value) == f"Label Studio answered 400 to PATCH /api/tasks/4/: {'x' * 119}…."


def test_an_error_never_shows_the_token():
    def handler(request):  # a server that echoes the request's headers into its error
        return httpx.Response(500, text=f"bad header {request.headers['authorization']}")

    client = fake(handler)
    with pytest.raises(LabelStudioError) as error:
        client.task(5)
    assert CONNECTION.api_key not in str(error.value) and CONNECTION.api_key not in client.reachability.last_error
    assert str(error.value) == "Label Studio answered 500 to GET /api/tasks/5/: bad header Token <token>."


def _closed_port():
    import socket

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        return listening.getsockname()[1]


def test_a_label_studio_that_cannot_be_reached_is_named_by_its_url():
    port = _closed_port()
    connection = replace(CONNECTION, url=f"http://127.0.0.1:{port}", retries=1)
    client = LabelStudioClient(connection, sleep=lambda _: None)
    with pytest.raises(LabelStudioError) as error:
        client.label_config(1)
    assert str(error.value) == f"Cannot reach Label Studio at http://127.0.0.1:{port}: connection refused."
    assert client.reachability.last_error == str(error.value)


def test_a_label_studio_that_does_not_answer_in_time_is_named_with_the_request_and_the_wait():
    def handler(request):
        raise httpx.ReadTimeout("timed out", request=request)

    client = LabelStudioClient(replace(CONNECTION, url="https://user:pw@ls.test/ls/", timeout=7.5),
                               httpx_client=httpx.Client(transport=httpx.MockTransport(handler)), sleep=lambda _: None)
    with pytest.raises(LabelStudioError) as error:
        client.task(9)
    assert str(error.value) == ("Label Studio at https://ls.test/ls did not answer GET /ls/api/tasks/9/ within 7.5 s "
                                "(--timeout sets the wait).")
