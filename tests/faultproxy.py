"""A fault-injecting HTTP reverse proxy on loopback, for tests of how the service survives a bad network.

The test starts a :class:`FaultProxy` in front of a real upstream (Label Studio), points the code under test at
``proxy.url``, and sets and clears fault rules while it runs::

    with FaultProxy(label_studio.url, seed=1) as proxy:
        proxy.fail(503, method="PATCH", path=r"/api/tasks/\\d+", times=2)   # the next two PATCHes get a 503
        proxy.drop(after=True, method="PATCH", path=r"/api/tasks/\\d+")     # applied upstream, answer lost
        proxy.down(seconds=5)                                                # Label Studio unreachable for 5 s
        ...
        assert proxy.seen("PATCH", r"/api/tasks/\\d+") >= 3

It uses the standard library only: one thread accepts connections, one thread per client connection serves its
requests in turn (HTTP/1.1 keep-alive towards the client), and every forwarded request opens a fresh upstream
connection, so that a stale upstream keep-alive connection can never be taken for an injected fault. Bodies are
streamed in both directions (``Content-Length``, chunked, or until the upstream closes), never held whole.

Each request meets at most one fault: the first rule, in the order added, that matches its method and path, is
still active (``times`` left, ``duration`` not over), and wins its seeded ``probability`` draw. The proxy listens
on 127.0.0.1 only, and :meth:`FaultProxy.stop` closes every socket and joins every thread it started.
"""

from __future__ import annotations

import http.client
import random
import re
import select
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Literal, Self
from urllib.parse import urlsplit

Fault = Literal["status", "portal", "delay_request", "delay_response", "drop_before", "drop_after"]
DownMode = Literal["refuse", "close", "503"]

CHUNK = 64 * 1024
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "trailers", "transfer-encoding", "upgrade", "proxy-connection"})
PORTAL_PAGE = (b"<!DOCTYPE html>\n<html><head><title>Sign in to the network</title></head>\n"
               b"<body><h1>Welcome to Guest Wi-Fi</h1><p>Please accept the terms to continue.</p>\n"
               b"<form method=\"post\" action=\"/login\"><button>Accept</button></form></body></html>\n")


@dataclass(eq=False)
class Rule:
    """One fault and the requests it applies to.

    ``method`` and ``path`` are regular expressions matched in full (case-insensitive for the method) against
    the request's method and its path without the query; a trailing ``/`` on the path is tolerated, so
    ``r"/api/tasks"`` matches ``/api/tasks/`` but not ``/api/tasks/7``. ``None`` matches anything. ``times``
    counts the requests the rule may still fault (``None``: unlimited); ``probability`` is drawn from a
    generator seeded by the proxy's seed and the rule's rank, so a sequential test replays exactly; ``duration``
    (seconds from the rule's creation) ends the rule.
    """

    fault: Fault
    method: str | None = None
    path: str | None = None
    times: int | None = None
    probability: float = 1.0
    duration: float | None = None
    status: int = 503
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    reset: bool = False
    fired: int = 0
    until: float | None = field(default=None, repr=False)
    rng: random.Random = field(default_factory=random.Random, repr=False)

    def matches(self, method: str, path: str) -> bool:
        return _matches(self.method, self.path, method, path)


@dataclass(frozen=True)
class Exchange:
    """One request the proxy read: what it was, which fault it met (``None``: forwarded as is), what it answered.

    ``seconds``: for a request forwarded, the time from sending it upstream to the upstream's answer's head (the
    upstream's time for it); None otherwise.
    """

    method: str
    path: str
    query: str
    fault: str | None
    status: int | None
    at: float
    seconds: float | None = None


def _matches(method_pattern: str | None, path_pattern: str | None, method: str, path: str) -> bool:
    if method_pattern is not None and not re.fullmatch(method_pattern, method, flags=re.IGNORECASE):
        return False
    return path_pattern is None or re.fullmatch(f"(?:{path_pattern})/?", path) is not None


class FaultProxy:
    """A reverse proxy from ``url`` (127.0.0.1, a free port unless ``port`` is given) to ``upstream``.

    Parameters
    ----------
    upstream
        Base URL of the server to forward to, ``http://host:port``.
    seed
        Seeds the probability draws of the rules.
    port
        Port to listen on; 0 picks a free one.
    upstream_timeout
        Seconds to wait for the upstream to connect and to send each block of its answer.
    idle_timeout
        Seconds a client's keep-alive connection may stay idle before the proxy closes it.
    """

    def __init__(self, upstream: str, *, seed: int = 0, port: int = 0, upstream_timeout: float = 60.0,
                 idle_timeout: float = 120.0) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"The upstream must be an http:// URL with a host, not {upstream!r}.")
        self.upstream = upstream.rstrip("/")
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port or 80
        self.seed = seed
        self.upstream_timeout = upstream_timeout
        self.idle_timeout = idle_timeout
        self._lock = threading.Lock()
        self._rules: list[Rule] = []
        self._ranks = 0
        self._log: list[Exchange] = []
        self._refused = 0
        self._errors: list[BaseException] = []
        self._down_until: float | None = None
        self._down_mode: DownMode | None = None
        self._stopping = threading.Event()
        self._listener: socket.socket | None = self._bind(port)
        self.port = int(self._listener.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._state = threading.Condition(self._lock)
        self._wanted = 0
        self._applied = 0
        self._connections: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._acceptor: threading.Thread | None = None

    # -- life cycle ---------------------------------------------------------------------------------------------

    def start(self) -> Self:
        """Start accepting connections in a background thread; return the proxy."""
        if self._acceptor is not None:
            raise RuntimeError("This proxy is already started; a proxy starts once.")
        self._acceptor = threading.Thread(target=self._accept_loop, name=f"faultproxy-{self.port}", daemon=True)
        self._acceptor.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Close the listener and every connection, and join every thread; raise if one does not end."""
        with self._lock:
            self._stopping.set()
            connections = list(self._connections)
        for connection in connections:
            _shutdown(connection)
        threads = [self._acceptor] if self._acceptor else []
        with self._lock:
            threads += list(self._threads)
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        alive = [t.name for t in threads if t.is_alive()]
        if alive:
            raise RuntimeError(f"The fault proxy's threads {alive} did not end within {timeout} s of stop().")

    def __enter__(self) -> Self:
        return self.start() if self._acceptor is None else self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- rules --------------------------------------------------------------------------------------------------

    def add(self, rule: Rule) -> Rule:
        """Append ``rule`` (after every rule already there) and return it."""
        if not 0.0 <= rule.probability <= 1.0:
            raise ValueError(f"A probability lies between 0 and 1, not {rule.probability}.")
        if rule.times is not None and rule.times < 0:
            raise ValueError(f"A rule faults a non-negative number of requests, not {rule.times}.")
        for pattern in (rule.method, rule.path):
            if pattern is not None:
                re.compile(pattern)
        with self._lock:
            rule.rng = random.Random(f"{self.seed}:{self._ranks}")
            self._ranks += 1
            rule.until = None if rule.duration is None else time.monotonic() + rule.duration
            self._rules.append(rule)
        return rule

    def fail(self, status: int = 503, *, method: str | None = None, path: str | None = None,
             times: int | None = None, probability: float = 1.0, duration: float | None = None,
             headers: dict[str, str] | None = None, body: bytes | None = None) -> Rule:
        """Answer ``status`` (500, 502, 503, 429...) instead of forwarding; the upstream never sees the request."""
        text = body if body is not None else f"{status} {http.client.responses.get(status, 'Error')}\n".encode()
        return self.add(Rule("status", method, path, times, probability, duration, status=status, body=text,
                             headers={"Content-Type": "text/plain", **(headers or {})}))

    def portal(self, *, method: str | None = None, path: str | None = None, times: int | None = None,
               probability: float = 1.0, duration: float | None = None, body: bytes = PORTAL_PAGE) -> Rule:
        """Answer 200 with an HTML page, as a captive portal would, instead of forwarding."""
        return self.add(Rule("portal", method, path, times, probability, duration, status=200, body=body,
                             headers={"Content-Type": "text/html; charset=utf-8"}))

    def delay_request(self, seconds: float, *, method: str | None = None, path: str | None = None,
                      times: int | None = None, probability: float = 1.0, duration: float | None = None) -> Rule:
        """Hold the request ``seconds`` before forwarding it: it lands late upstream."""
        return self.add(Rule("delay_request", method, path, times, probability, duration, seconds=seconds))

    def delay_response(self, seconds: float, *, method: str | None = None, path: str | None = None,
                       times: int | None = None, probability: float = 1.0, duration: float | None = None) -> Rule:
        """Forward at once, then hold the upstream's answer ``seconds``: the work is done, the answer is late."""
        return self.add(Rule("delay_response", method, path, times, probability, duration, seconds=seconds))

    def drop(self, *, after: bool = False, reset: bool = False, method: str | None = None, path: str | None = None,
             times: int | None = None, probability: float = 1.0, duration: float | None = None) -> Rule:
        """Close the client's connection without answering.

        Before forwarding (``after=False``) the upstream never sees the request; after (``after=True``) the
        upstream has answered in full, and that answer is lost. ``reset`` closes with a TCP reset instead of
        an orderly close.
        """
        fault: Fault = "drop_after" if after else "drop_before"
        return self.add(Rule(fault, method, path, times, probability, duration, reset=reset))

    def remove(self, rule: Rule) -> None:
        """Remove ``rule``, if it is still there."""
        with self._lock:
            if rule in self._rules:
                self._rules.remove(rule)

    def clear(self) -> None:
        """Remove every rule and end a ``down`` period: forward everything again."""
        with self._lock:
            self._rules.clear()
        self.up()

    @property
    def rules(self) -> list[Rule]:
        with self._lock:
            return list(self._rules)

    # -- down ---------------------------------------------------------------------------------------------------

    def down(self, seconds: float | None = None, *, mode: DownMode = "refuse") -> None:
        """Make the upstream unreachable for ``seconds`` (``None``: until :meth:`up`).

        ``"refuse"`` closes the listening socket, so that connecting fails with *connection refused*, and
        closes each open keep-alive connection at its next request; ``"close"`` reads each request and closes
        the connection without answering; ``"503"`` answers each request 503. Returns once in force.
        """
        if mode not in ("refuse", "close", "503"):
            raise ValueError(f"The down mode is 'refuse', 'close' or '503', not {mode!r}.")
        with self._state:
            self._down_mode = mode
            self._down_until = float("inf") if seconds is None else time.monotonic() + seconds
        self._apply_state()

    def up(self) -> None:
        """End a ``down`` period now; returns once the proxy listens again."""
        with self._state:
            self._down_mode = None
            self._down_until = None
        self._apply_state()

    @property
    def is_down(self) -> bool:
        with self._lock:
            return self._down_now() is not None

    def _down_now(self) -> DownMode | None:
        """The down mode in force; the caller holds the lock."""
        if self._down_mode is not None and self._down_until is not None and time.monotonic() < self._down_until:
            return self._down_mode
        return None

    def _apply_state(self) -> None:
        if self._acceptor is None or self._stopping.is_set():
            self._apply_listener()
            return
        with self._state:
            self._wanted += 1
            wanted = self._wanted
            if not self._state.wait_for(lambda: self._applied >= wanted, timeout=10):
                raise RuntimeError("The fault proxy's accept loop did not take the new state within 10 s.")

    def _apply_listener(self) -> None:
        """Close or reopen the listener as the down state asks; only the accept loop calls this once started."""
        with self._lock:
            refuse = self._down_now() == "refuse"
        if refuse and self._listener is not None:
            self._listener.close()
            self._listener = None
        elif not refuse and self._listener is None and not self._stopping.is_set():
            self._listener = self._bind(self.port)

    # -- counters -----------------------------------------------------------------------------------------------

    def seen(self, method: str | None = None, path: str | None = None) -> int:
        """Number of requests read whose method and path match (same matching as :class:`Rule`)."""
        with self._lock:
            return sum(_matches(method, path, e.method, e.path) for e in self._log)

    def injected(self, fault: str | None = None, *, method: str | None = None, path: str | None = None) -> int:
        """Number of requests that met ``fault`` (any fault if ``None``), ``"down"`` included."""
        with self._lock:
            return sum(e.fault is not None and (fault is None or e.fault == fault)
                       and _matches(method, path, e.method, e.path) for e in self._log)

    @property
    def log(self) -> list[Exchange]:
        """Every request read, in order."""
        with self._lock:
            return list(self._log)

    @property
    def errors(self) -> list[BaseException]:
        """Unexpected errors of the proxy's own threads (client or upstream disconnects are not errors)."""
        with self._lock:
            return list(self._errors)

    def counts(self) -> Counter[tuple[str, str]]:
        """Requests read, by (method, path)."""
        with self._lock:
            return Counter((e.method, e.path) for e in self._log)

    def reset_counters(self) -> None:
        """Forget the log and each rule's ``fired`` count (rules and their ``times`` left stay)."""
        with self._lock:
            self._log.clear()
            for rule in self._rules:
                rule.fired = 0

    # -- internals ----------------------------------------------------------------------------------------------

    @staticmethod
    def _bind(port: int) -> socket.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind(("127.0.0.1", port))
            listener.listen(64)
        except OSError:
            listener.close()
            raise
        return listener

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            with self._state:
                wanted = self._wanted
            try:
                self._apply_listener()
            except OSError as error:  # the port was taken while refusing: report it and stop accepting
                self._record_error(error)
                return
            finally:
                with self._state:
                    self._applied = max(self._applied, wanted)
                    self._state.notify_all()
            listener = self._listener
            if listener is None:
                self._stopping.wait(0.01)
                continue
            readable, _, _ = select.select([listener], [], [], 0.02)
            if not readable or self._stopping.is_set():
                continue
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            thread = threading.Thread(target=self._serve_connection, args=(connection,), daemon=True,
                                      name=f"faultproxy-{self.port}-conn")
            with self._lock:
                self._connections.add(connection)
                self._threads.add(thread)
            thread.start()

    def _serve_connection(self, connection: socket.socket) -> None:
        try:
            connection.settimeout(self.idle_timeout)
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms Nagle stall per answer
            _Handler(connection, connection.getpeername(), self)
        except (OSError, http.client.HTTPException):
            pass
        except Exception as error:  # noqa: BLE001 - kept for the test to see, never raised in a thread
            self._record_error(error)
        finally:
            with self._lock:
                self._connections.discard(connection)
                self._threads.discard(threading.current_thread())
            connection.close()

    def _track(self, connection: socket.socket) -> None:
        """Register an upstream socket for stop() to shut down; refuse once stopping."""
        with self._lock:
            if self._stopping.is_set():
                raise ConnectionAbortedError("The fault proxy is stopping.")
            self._connections.add(connection)

    def _untrack(self, connection: socket.socket) -> None:
        with self._lock:
            self._connections.discard(connection)

    def _record_error(self, error: BaseException) -> None:
        with self._lock:
            self._errors.append(error)

    def _choose(self, method: str, path: str) -> Rule | DownMode | None:
        """The fault this request meets, counted; ``None`` to forward it."""
        with self._lock:
            mode = self._down_now()
            if mode is not None:
                return mode
            now = time.monotonic()
            for rule in self._rules:
                if rule.times is not None and rule.times <= 0 or rule.until is not None and now >= rule.until:
                    continue
                if not rule.matches(method, path):
                    continue
                if rule.probability < 1.0 and rule.rng.random() >= rule.probability:
                    continue
                if rule.times is not None:
                    rule.times -= 1
                rule.fired += 1
                return rule
            return None

    def _record(self, method: str, path: str, query: str, fault: str | None, status: int | None, *,
                seconds: float | None = None) -> None:
        with self._lock:
            self._log.append(Exchange(method, path, query, fault, status, time.monotonic(), seconds))

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)


def _shutdown(connection: socket.socket) -> None:
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _reset(connection: socket.socket) -> None:
    """Make the coming close send a TCP reset."""
    try:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass


class _Handler(BaseHTTPRequestHandler):
    """Serves the requests of one client connection: any method, each met by its fault or forwarded."""

    protocol_version = "HTTP/1.1"
    server: FaultProxy  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Callable[[], None]:  # any do_METHOD
        if name.startswith("do_"):
            return self._proxy_request
        raise AttributeError(name)

    def log_message(self, format: str, *args: object) -> None:  # silence the default stderr log
        pass

    # -- one request --------------------------------------------------------------------------------------------

    def _proxy_request(self) -> None:
        proxy = self.server
        self._pending = True
        target = self.path
        if target.startswith(("http://", "https://")):  # absolute form, as sent to a forward proxy
            target = "/" + (target.split("/", 3) + [""])[3]
        self._target = target
        path, _, query = target.partition("?")
        method = self.command
        choice = proxy._choose(method, path)
        if isinstance(choice, str):  # down
            self._drain_body()
            if choice == "503":
                proxy._record(method, path, query, "down", 503)
                self._answer(503, b"503 Service Unavailable\n", {"Content-Type": "text/plain"})
            else:
                proxy._record(method, path, query, "down", None)
                self._drop(reset=False)
            return
        rule = choice
        fault = rule.fault if rule else None
        if fault in ("status", "portal"):
            self._drain_body()
            proxy._record(method, path, query, fault, rule.status)
            self._answer(rule.status, rule.body, rule.headers)
            return
        if fault == "drop_before":
            self._drain_body()
            proxy._record(method, path, query, fault, None)
            self._drop(reset=rule.reset)
            return
        if fault == "delay_request":
            proxy._sleep(rule.seconds)
            if proxy._stopping.is_set():
                self._drop(reset=False)
                return
        sent = time.monotonic()
        try:
            upstream, response = self._forward(method)
        except (OSError, http.client.HTTPException) as error:
            if self._body_left:
                self.close_connection = True
            proxy._record(method, path, query, fault, 502)
            self._answer(502, f"502 Bad Gateway: the upstream failed: {error}\n".encode(),
                         {"Content-Type": "text/plain"})
            return
        try:
            if fault == "drop_after":
                while response.read(CHUNK):
                    pass
                proxy._record(method, path, query, fault, None)
                self._drop(reset=rule.reset)
                return
            if fault == "delay_response":
                proxy._sleep(rule.seconds)
                if proxy._stopping.is_set():
                    self._drop(reset=False)
                    return
            proxy._record(method, path, query, fault, response.status,
                          seconds=None if fault == "delay_response" else time.monotonic() - sent)
            self._relay(response, method)
        finally:
            self._close_upstream(upstream)

    # -- reading the client's request ---------------------------------------------------------------------------

    @property
    def _body_left(self) -> bool:
        return getattr(self, "_pending", True)

    def _body_chunks(self) -> Iterator[bytes]:
        """The request body as it arrives, de-chunked."""
        self._pending = True
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            while True:
                size = int(self.rfile.readline(65537).split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                left = size
                while left:
                    block = self.rfile.read(min(CHUNK, left))
                    if not block:
                        raise ConnectionError("The client closed in the middle of a chunk.")
                    left -= len(block)
                    yield block
                self.rfile.readline(65537)
        else:
            left = int(self.headers.get("Content-Length") or 0)
            while left:
                block = self.rfile.read(min(CHUNK, left))
                if not block:
                    raise ConnectionError("The client closed in the middle of its body.")
                left -= len(block)
                yield block
        self._pending = False

    def _drain_body(self) -> None:
        for _ in self._body_chunks():
            pass

    # -- forwarding ---------------------------------------------------------------------------------------------

    def _forward(self, method: str) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        proxy = self.server
        upstream = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port,
                                              timeout=proxy.upstream_timeout)
        try:
            upstream.connect()
            upstream.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            proxy._track(upstream.sock)
            upstream.putrequest(method, self._target, skip_host=True, skip_accept_encoding=True)
            for name, value in self.headers.items():
                if name.lower() not in HOP_BY_HOP and name.lower() not in ("host", "content-length", "expect"):
                    upstream.putheader(name, value)
            default_port = proxy.upstream_port == 80
            upstream.putheader("Host", proxy.upstream_host if default_port else
                               f"{proxy.upstream_host}:{proxy.upstream_port}")
            upstream.putheader("Connection", "close")
            chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
            if chunked:
                upstream.putheader("Transfer-Encoding", "chunked")
            elif self.headers.get("Content-Length") is not None:
                upstream.putheader("Content-Length", self.headers["Content-Length"])
            upstream.endheaders()
            for block in self._body_chunks():
                upstream.send(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
            if chunked:
                upstream.send(b"0\r\n\r\n")
            return upstream, upstream.getresponse()
        except BaseException:
            self._close_upstream(upstream)
            raise

    def _close_upstream(self, upstream: http.client.HTTPConnection) -> None:
        if upstream.sock is not None:
            self.server._untrack(upstream.sock)
        upstream.close()

    def _relay(self, response: http.client.HTTPResponse, method: str) -> None:
        """Send the upstream's answer to the client, streaming its body."""
        proxy = self.server
        self.send_response_only(response.status, response.reason)
        length = response.getheader("Content-Length")
        bodiless = method == "HEAD" or response.status in (204, 304) or 100 <= response.status < 200
        chunked = not bodiless and length is None and self.request_version == "HTTP/1.1"
        for name, value in response.getheaders():
            lower = name.lower()
            if lower in HOP_BY_HOP:
                continue
            if lower == "location" and value.startswith(proxy.upstream):
                value = proxy.url + value[len(proxy.upstream):]
            self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        elif not bodiless and length is None:
            self.close_connection = True
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if bodiless:
            return
        while block := response.read1(CHUNK):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # -- answering or not ---------------------------------------------------------------------------------------

    def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response_only(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def _drop(self, *, reset: bool) -> None:
        self.close_connection = True
        if reset:
            _reset(self.connection)
        else:
            _shutdown(self.connection)
