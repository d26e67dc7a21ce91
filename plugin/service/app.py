"""``ls-agreement serve``'s web app: its routes, each behind the shared secret but ``/health``.

An app factory (:func:`create_app`) with its state in one object it owns
(:class:`plugin.service.projects.ServiceState`, which runs the threads).

Every route but ``/health`` needs the secret, in the ``X-Agreement-Secret``
header, as ``Authorization: Bearer <secret>`` (what Prometheus sends for a
scrape of ``/metrics``), or as the path prefix ``/s/<secret>/`` (for the
webhook Label Studio's ML connection creates without custom headers); never
in a query.
``/health`` says UP or DOWN and nothing else: DOWN (503) when a worker thread
has stopped or Label Studio has been unreachable for longer than
``unhealthy_after``, so a container's health check restarts the service.
Payloads are never logged or stored as received.
"""

from __future__ import annotations

import hmac
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, Response

from plugin import __version__
from plugin.labelstudio.client import LabelStudioClient
from plugin.labelstudio.events import BadEvent, parse_body, parse_event
from plugin.report import report_json
from plugin.report.page import render_html
from plugin.service.metrics import CONTENT_TYPE
from plugin.service.projects import ServiceState
from plugin.service.settings import SECRET_HEADER, ServiceSettings, check_secret_strength
from plugin.service.status import service_report, service_status

__all__ = ["ServiceSettings", "ServiceState", "check_secret_strength", "create_app"]


async def _read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) as soon as it passes ``limit`` bytes, while streaming."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(status_code=413, detail="The payload is larger than the service accepts.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(status_code=413, detail="The payload is larger than the service accepts.")
        chunks.append(chunk)
    return b"".join(chunks)


def create_app(settings: ServiceSettings, client: LabelStudioClient, *, register: bool = True) -> FastAPI:
    """The web service; its state is ``app.state.agreement`` (a :class:`ServiceState`)."""
    check_secret_strength(settings.secret)
    state = ServiceState(settings, client)
    expected = settings.secret.encode()

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        state.start(register=register)
        yield
        state.stop()

    app = FastAPI(title="label-studio-agreement", version=__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url=None)
    app.state.agreement = state

    def authorized(request: Request) -> None:
        given = request.path_params.get("secret")
        if given is None:
            given = request.headers.get(SECRET_HEADER)
        if given is None:
            scheme, _, token = request.headers.get("authorization", "").partition(" ")
            given = token.strip() if scheme.lower() == "bearer" and token.strip() else None
        if given is None or not hmac.compare_digest(given.encode(), expected):
            with state.lock:
                state.rejected += 1
            raise HTTPException(status_code=401, detail="Wrong or missing secret.")

    guarded = APIRouter(dependencies=[Depends(authorized)])

    @guarded.post("/webhook")
    async def webhook(request: Request) -> JSONResponse:
        body = await _read_body(request, settings.max_body)
        try:
            event = await run_in_threadpool(lambda: parse_event(parse_body(body)))
        except BadEvent as error:
            with state.lock:
                state.bad_payloads[str(error)] += 1
            raise HTTPException(status_code=400, detail=str(error)) from None
        if event is None:
            return JSONResponse({"status": "ignored"})
        state.events.submit(event)
        return JSONResponse({"status": "accepted"})

    @guarded.get("/status")
    def status() -> dict[str, Any]:
        return service_status(state)

    @guarded.get("/metrics")
    def metrics() -> Response:
        return Response(state.metrics.exposition(), media_type=CONTENT_TYPE)

    @guarded.get("/report")
    def report(project: int | None = None, format: str = "html", table: str = "tasks") -> Response:
        try:
            built = service_report(state, project)
        except LookupError as error:
            raise HTTPException(status_code=404, detail=str(error)) from None
        except RuntimeError as error:
            raise HTTPException(status_code=503, detail=str(error)) from None
        if format == "html":
            return HTMLResponse(render_html(built))
        if format == "json":
            return JSONResponse(report_json(built))
        if format == "csv" and table in built.tables():
            return Response(built.tables()[table].to_csv(index=False), media_type="text/csv")
        raise HTTPException(status_code=400, detail="Ask for format=html, format=json, or format=csv with table="
                                                    f"one of {', '.join(built.tables())}.")

    @guarded.post("/setup")
    def setup() -> dict[str, str]:
        return {"model_version": f"agreement-{__version__}"}

    @guarded.post("/predict")
    def predict() -> dict[str, list[Any]]:
        return {"results": []}

    def health() -> JSONResponse:
        if state.healthy():
            return JSONResponse({"status": "UP"})
        return JSONResponse({"status": "DOWN"}, status_code=503)

    app.add_api_route("/health", health, methods=["GET"])
    app.add_api_route("/s/{secret}/health", health, methods=["GET"])
    app.include_router(guarded)
    app.include_router(guarded, prefix="/s/{secret}")
    return app

