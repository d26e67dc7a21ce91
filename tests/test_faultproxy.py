"""The fault proxy against a small local HTTP server: each fault does what it says, and stop() leaves nothing."""

import hashlib
import http.client
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
import requests
from label_studio_sdk import LabelStudio
from label_studio_sdk.core.api_error import ApiError

from tests.faultproxy import FaultProxy

MIB = 1024 * 1024


class Upstream(BaseHTTPRequestHandler):
    """Echoes each request as JSON and records it, with the time it arrived; a few paths answer otherwise."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def handle_one_request(self):
        self.arrived = time.monotonic()
        super().handle_one_request()

    def __getattr__(self, name):
        if name.startswith("do_"):
            return self.answer
        raise AttributeError(name)

    def body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", ""):
            data = b""
            while size := int(self.rfile.readline().strip(), 16):
                data += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
            return data
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def answer(self):
        body = self.body()
        path, _, query = self.path.partition("?")
        self.server.seen.append({"method": self.command, "path": path, "query": query, "at": self.arrived,
                                 "host": self.headers["Host"], "length": len(body)})
        if path.startswith("/big/"):  # /big/N: N MiB of a known pattern, with a Content-Length
            size = int(path.rsplit("/", 1)[1]) * MIB
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.end_headers()
            for _ in range(size // MIB):
                self.wfile.write(PATTERN)
            return
        if path == "/chunked":  # three chunks, no Content-Length
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (b"alpha-", b"beta-", b"gamma"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        if path == "/redirect":
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/target")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path == "/empty":
            self.send_response(204)
            self.end_headers()
            return
        payload = json.dumps({"method": self.command, "path": path, "query": query, "host": self.headers["Host"],
                              "sha256": hashlib.sha256(body).hexdigest(), "length": len(body),
                              "custom": self.headers.get("X-Custom")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)


PATTERN = bytes(range(256)) * (MIB // 256)


@pytest.fixture
def upstream():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    server.daemon_threads = True
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def proxy(upstream):
    before = set(threading.enumerate())
    with FaultProxy(f"http://127.0.0.1:{upstream.server_port}", seed=7) as proxy:
        yield proxy
        assert proxy.errors == []
    left = [t for t in threading.enumerate() if t not in before and t.name.startswith("faultproxy")]
    assert left == []


def paths(upstream, method=None):
    return [s["path"] for s in upstream.seen if method is None or s["method"] == method]


# -- forwarding -------------------------------------------------------------------------------------------------


def test_forwards_method_path_query_headers_body_and_fixes_host(proxy, upstream):
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND"):
        answer = requests.request(method, f"{proxy.url}/api/tasks/5?fields=all&x=1", data=b"payload-" + method.encode(),
                                  headers={"X-Custom": "kept"}, timeout=5)
        echo = answer.json()
        assert answer.status_code == 200
        assert echo == {"method": method, "path": "/api/tasks/5", "query": "fields=all&x=1",
                        "host": f"127.0.0.1:{upstream.server_port}", "length": len(method) + 8,
                        "sha256": hashlib.sha256(b"payload-" + method.encode()).hexdigest(), "custom": "kept"}
    head = requests.head(f"{proxy.url}/x", timeout=5)
    assert head.status_code == 200 and head.content == b"" and int(head.headers["Content-Length"]) > 0
    assert requests.get(f"{proxy.url}/empty", timeout=5).status_code == 204
    assert proxy.seen() == 9 and proxy.seen("PATCH") == 1 and proxy.injected() == 0
    assert proxy.counts()[("PROPFIND", "/api/tasks/5")] == 1


def test_streams_large_bodies_both_ways_and_chunked(proxy, upstream):
    upload = PATTERN * 24  # 24 MiB
    echo = requests.post(f"{proxy.url}/upload", data=upload, timeout=30).json()
    assert echo["length"] == len(upload) and echo["sha256"] == hashlib.sha256(upload).hexdigest()
    # A generator is sent chunked: the proxy de-chunks and re-chunks it.
    echo = requests.post(f"{proxy.url}/upload", data=(PATTERN for _ in range(5)), timeout=30).json()
    assert echo["length"] == 5 * MIB and echo["sha256"] == hashlib.sha256(PATTERN * 5).hexdigest()
    answer = requests.get(f"{proxy.url}/big/32", timeout=30, stream=True)
    digest, size = hashlib.sha256(), 0
    for block in answer.iter_content(MIB):
        digest.update(block)
        size += len(block)
    assert int(answer.headers["Content-Length"]) == size == 32 * MIB
    assert digest.hexdigest() == hashlib.sha256(PATTERN * 32).hexdigest()
    chunked = requests.get(f"{proxy.url}/chunked", timeout=5)
    assert chunked.content == b"alpha-beta-gamma" and chunked.headers["Transfer-Encoding"] == "chunked"


def test_keeps_the_client_connection_alive(proxy):
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    connection.connect()
    first = connection.sock
    for i in range(5):
        connection.request("PATCH", f"/api/tasks/{i}", body=b"{}")
        assert json.loads(connection.getresponse().read())["path"] == f"/api/tasks/{i}"
    # A fault that answers keeps the connection too.
    proxy.fail(500, times=1)
    connection.request("GET", "/x")
    assert connection.getresponse().read() == b"500 Internal Server Error\n"
    connection.request("GET", "/x")
    assert connection.getresponse().status == 200
    assert connection.sock is first
    connection.close()


def test_rewrites_the_upstreams_own_location(proxy):
    answer = requests.get(f"{proxy.url}/redirect", allow_redirects=False, timeout=5)
    assert answer.headers["Location"] == f"{proxy.url}/target"


def test_an_unreachable_upstream_gives_502():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    with FaultProxy(f"http://127.0.0.1:{port}") as proxy:
        answer = requests.get(f"{proxy.url}/api/tasks", timeout=5)
        assert answer.status_code == 502 and "upstream failed" in answer.text
        assert proxy.log[0].status == 502 and proxy.log[0].fault is None


# -- faults that answer -----------------------------------------------------------------------------------------


def test_status_for_the_next_n_matching_requests_only(proxy, upstream):
    rule = proxy.fail(503, method="PATCH", path=r"/api/tasks/\d+", times=2)
    assert requests.get(f"{proxy.url}/api/tasks/1", timeout=5).status_code == 200  # GET: no match
    assert requests.patch(f"{proxy.url}/api/tasks/", timeout=5).status_code == 200  # no id: no match
    statuses = [requests.patch(f"{proxy.url}/api/tasks/{i}", json={}, timeout=5).status_code for i in range(4)]
    assert statuses == [503, 503, 200, 200]
    assert rule.fired == 2 and rule.times == 0
    assert paths(upstream, "PATCH") == ["/api/tasks/", "/api/tasks/2", "/api/tasks/3"]  # never saw the 503s
    assert proxy.seen("PATCH", r"/api/tasks/\d+") == 4 and proxy.injected("status") == 2
    assert [e.status for e in proxy.log if e.method == "PATCH"] == [200, 503, 503, 200, 200]


def test_429_carries_its_headers_and_500_502(proxy):
    proxy.fail(429, times=1, headers={"Retry-After": "1"})
    proxy.fail(500, times=1)
    proxy.fail(502, times=1)
    answers = [requests.get(f"{proxy.url}/x", timeout=5) for _ in range(4)]
    assert [a.status_code for a in answers] == [429, 500, 502, 200]
    assert answers[0].headers["Retry-After"] == "1" and answers[0].text == "429 Too Many Requests\n"


def test_probability_is_seeded(upstream):
    def statuses(seed):
        with FaultProxy(f"http://127.0.0.1:{upstream.server_port}", seed=seed) as proxy:
            proxy.fail(503, probability=0.3)
            with requests.Session() as session:
                return [session.get(f"{proxy.url}/x", timeout=5).status_code for _ in range(100)]

    first = statuses(1)
    assert statuses(1) == first != statuses(2)
    # Binomial(100, 0.3): 30 expected, sd 4.6; the draw is seeded, so this holds or fails every time.
    assert 15 <= first.count(503) <= 45 and set(first) == {200, 503}


def test_portal_answers_200_html(proxy, upstream):
    proxy.portal(method="GET", path="/api/tasks", times=1)
    answer = requests.get(f"{proxy.url}/api/tasks/?page=2", timeout=5)
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("text/html")
    assert answer.text.startswith("<!DOCTYPE html>")
    with pytest.raises(requests.JSONDecodeError):
        answer.json()
    assert requests.get(f"{proxy.url}/api/tasks/?page=2", timeout=5).json()["query"] == "page=2"
    assert paths(upstream) == ["/api/tasks/"] and proxy.injected("portal", path="/api/tasks") == 1


def test_rules_end_by_duration_and_can_be_removed_or_cleared(proxy):
    timed = proxy.fail(500, duration=0.3)
    assert requests.get(f"{proxy.url}/x", timeout=5).status_code == 500
    time.sleep(0.4)
    assert requests.get(f"{proxy.url}/x", timeout=5).status_code == 200
    proxy.remove(timed)
    rule = proxy.fail(502)
    assert requests.get(f"{proxy.url}/x", timeout=5).status_code == 502
    proxy.remove(rule)
    assert requests.get(f"{proxy.url}/x", timeout=5).status_code == 200
    proxy.fail(502)
    proxy.portal()
    proxy.clear()
    assert proxy.rules == [] and requests.get(f"{proxy.url}/x", timeout=5).status_code == 200
    with pytest.raises(ValueError, match="probability"):
        proxy.fail(500, probability=1.5)


# -- delays -----------------------------------------------------------------------------------------------------


def test_delay_request_lands_late(proxy, upstream):
    proxy.delay_request(0.6, method="PATCH", times=1)
    sent = time.monotonic()
    answer = requests.patch(f"{proxy.url}/api/tasks/1", json={}, timeout=5)
    took = time.monotonic() - sent
    assert answer.status_code == 200 and 0.6 <= took < 3
    assert upstream.seen[-1]["at"] - sent >= 0.6  # the upstream received it late
    sent = time.monotonic()
    requests.patch(f"{proxy.url}/api/tasks/1", json={}, timeout=5)
    assert time.monotonic() - sent < 0.5 and proxy.injected("delay_request") == 1


def test_delay_response_arrives_late(proxy, upstream):
    proxy.delay_response(0.6, path=r"/api/tasks/\d+")
    sent = time.monotonic()
    answer = requests.get(f"{proxy.url}/api/tasks/1", timeout=5)
    took = time.monotonic() - sent
    assert answer.json()["path"] == "/api/tasks/1" and 0.6 <= took < 3
    assert upstream.seen[-1]["at"] - sent < 0.3  # the upstream got it at once
    # A client that gives up earlier times out, while the upstream has done the work.
    with pytest.raises(requests.Timeout):
        requests.patch(f"{proxy.url}/api/tasks/2", json={}, timeout=0.2)
    assert paths(upstream, "PATCH") == ["/api/tasks/2"]


# -- drops and down ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reset", [False, True])
def test_drop_before_forwarding(proxy, upstream, reset):
    proxy.drop(method="PATCH", times=1, reset=reset)
    with pytest.raises(requests.ConnectionError):
        requests.patch(f"{proxy.url}/api/tasks/1", json={"meta": 1}, timeout=5)
    assert paths(upstream) == []  # never forwarded
    assert requests.patch(f"{proxy.url}/api/tasks/1", json={}, timeout=5).status_code == 200
    assert proxy.injected("drop_before") == 1 and [e.status for e in proxy.log] == [None, 200]


def test_drop_after_forwarding(proxy, upstream):
    proxy.drop(after=True, method="PATCH", times=1)
    with pytest.raises(requests.ConnectionError):
        requests.patch(f"{proxy.url}/api/tasks/1", json={"meta": 1}, timeout=5)
    assert paths(upstream, "PATCH") == ["/api/tasks/1"]  # applied upstream; the answer was lost
    proxy.drop(after=True, times=1)
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    connection.request("GET", "/x")
    with pytest.raises(http.client.RemoteDisconnected):
        connection.getresponse()
    connection.close()
    assert proxy.injected("drop_after") == 2


def test_down_refuses_connections_then_comes_back(proxy, upstream):
    kept = requests.Session()
    assert kept.get(f"{proxy.url}/x", timeout=5).status_code == 200  # a keep-alive connection is open
    proxy.down()
    assert proxy.is_down
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", proxy.port), timeout=2).close()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{proxy.url}/x", timeout=5)
    with pytest.raises(requests.ConnectionError):  # the open connection is closed at its next request
        kept.get(f"{proxy.url}/x", timeout=5)
    proxy.up()
    assert requests.get(f"{proxy.url}/x", timeout=5).status_code == 200
    proxy.down(0.5)
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{proxy.url}/x", timeout=5)
    time.sleep(0.6)
    assert requests.get(f"{proxy.url}/x", timeout=5).status_code == 200 and not proxy.is_down
    assert len(upstream.seen) == 3
    kept.close()


def test_down_503_and_close_modes(proxy, upstream):
    proxy.down(mode="503")
    assert [requests.patch(f"{proxy.url}/api/tasks/1", timeout=5).status_code for _ in range(3)] == [503] * 3
    proxy.down(mode="close")
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{proxy.url}/x", timeout=5)
    proxy.clear()
    assert requests.get(f"{proxy.url}/x", timeout=5).status_code == 200
    assert paths(upstream) == ["/x"] and proxy.injected("down") == 4


# -- life cycle -------------------------------------------------------------------------------------------------


def test_listens_on_127_0_0_1_only(proxy):
    assert proxy._listener.getsockname()[0] == "127.0.0.1"
    with pytest.raises(ConnectionRefusedError):  # another loopback address of the same machine
        socket.create_connection(("127.0.0.2", proxy.port), timeout=2).close()


def test_stop_ends_every_thread_and_socket_even_mid_request(upstream):
    before = set(threading.enumerate())
    proxy = FaultProxy(f"http://127.0.0.1:{upstream.server_port}").start()
    idle = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    idle.request("GET", "/x")
    idle.getresponse().read()  # an idle keep-alive connection
    proxy.delay_response(30)
    outcome = []

    def wait_for_the_answer():
        try:
            outcome.append(requests.get(f"{proxy.url}/x", timeout=60).status_code)
        except requests.ConnectionError as error:
            outcome.append(type(error))

    stuck = threading.Thread(target=wait_for_the_answer)
    stuck.start()
    time.sleep(0.3)
    assert len([t for t in threading.enumerate() if t.name.startswith("faultproxy")]) == 3
    started = time.monotonic()
    proxy.stop()
    assert time.monotonic() - started < 2
    stuck.join(5)
    assert not stuck.is_alive() and outcome == [requests.ConnectionError]  # its connection was closed, unanswered
    assert [t for t in threading.enumerate() if t not in before] == []
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", proxy.port), timeout=2).close()
    idle.close()
    proxy.stop()  # twice is harmless


# -- label-studio-sdk through the proxy -------------------------------------------------------------------------


class FakeLabelStudio(BaseHTTPRequestHandler):
    """GET and PATCH of /api/tasks/<id>/ as Label Studio answers them, enough for the SDK to parse."""

    protocol_version = "HTTP/1.1"
    tasks: ClassVar[dict[int, dict]] = {}

    def log_message(self, format, *args):
        pass

    def reply(self, task):
        body = json.dumps(task).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        assert self.headers["Authorization"] == "Token secret-token"
        self.reply(self.tasks[int(self.path.strip("/").rsplit("/", 1)[1])])

    def do_PATCH(self):
        task = self.tasks[int(self.path.strip("/").rsplit("/", 1)[1])]
        task.update(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.reply(task)


def test_label_studio_sdk_gets_and_patches_through_the_proxy_and_its_faults(monkeypatch):
    from label_studio_sdk.core import http_client

    # The SDK waits a second, then two, between its retries; what is checked here is that it retries.
    monkeypatch.setattr(http_client, "INITIAL_RETRY_DELAY_SECONDS", 0.01, raising=False)
    FakeLabelStudio.tasks = {3: {"id": 3, "data": {"text": "Alice"}, "meta": {}, "project": 1}}
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeLabelStudio)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        with FaultProxy(f"http://127.0.0.1:{server.server_port}") as proxy:
            client = LabelStudio(base_url=proxy.url, api_key="secret-token")
            assert client.tasks.get(id="3").data == {"text": "Alice"}
            assert client.tasks.update(id="3", meta={"agreement": 0.5}).meta == {"agreement": 0.5}
            # The SDK retries a 503 twice by itself (label_studio_sdk.core.http_client._should_retry).
            proxy.fail(503, method="PATCH", times=2)
            assert client.tasks.update(id="3", meta={"agreement": 0.75}).meta == {"agreement": 0.75}
            proxy.portal(method="GET", times=1)
            with pytest.raises(ApiError) as portal:  # a 200 whose body is not JSON
                client.tasks.get(id="3")
            assert portal.value.status_code == 200 and "Guest Wi-Fi" in portal.value.body
            assert proxy.seen("GET", r"/api/tasks/3") == 2 and proxy.seen("PATCH", r"/api/tasks/3") == 4
            assert FakeLabelStudio.tasks[3]["meta"] == {"agreement": 0.75}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
