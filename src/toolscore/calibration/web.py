"""The labelling web page of `toolscore label`: one case at a time, each label saved at once.

The app answers only requests that name this server in their Host header (127.0.0.1 or
localhost, on its port: a DNS-rebinding page cannot) and carry the session's token: in the
query or a cookie for pages and assets, in the `X-Toolscore-Token` header for a label, which
another page cannot send without a CORS preflight this server never grants. Case content is
model output, so every piece of it is escaped by the templates and none reaches a script.
The store's connection lives on one worker thread of the app's own (sqlite3 connections
belong to the thread that made them).
"""

from __future__ import annotations

import asyncio
import hmac
import shlex
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import jinja2
import orjson
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolscore.calibration.batches import LABELS, MAX_NOTE, Batches, Label
from toolscore.calibration.page import case_page, visible
from toolscore.calibration.rubric_page import WORDS, rubric_item_page
from toolscore.calibration.serving import DROPPED, LOGGER
from toolscore.errors import InputError
from toolscore.specs.loading import SpecSet
from toolscore.store import DEFAULT_PATH, Store, open_store

T = TypeVar("T")

TOKEN_PARAM = "token"
"""The query parameter that carries the token in the address `toolscore label` prints."""
TOKEN_HEADER = "X-Toolscore-Token"
"""The header a label's POST must carry the token in (a cookie or the query is not enough)."""
COOKIE_PREFIX = "toolscore-label-"
"""The token cookie is named after the port: cookies are shared by every port of a host."""
MAX_BODY = 64 * 1024
"""Bytes of a label request accepted (a label and a note of at most MAX_NOTE characters)."""
HERE = Path(__file__).parent

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
}
"""Sent with every response: only this server's own scripts, styles and images run, no other
page may frame this one or load its files, and nothing is cached (a page changes once
labelled)."""


def create_app(store_path: str | Path, batch_id: int, labeller: str, token: str) -> Starlette:
    """The labelling app for one labeller of one batch of the store at `store_path`.

    The store is opened when the app starts (its lifespan) and closed when it stops; every
    request must carry `token` (see the module's docstring).
    """
    if not labeller.strip():
        raise ValueError("the labeller's name must not be empty")
    templates = Jinja2Templates(
        env=jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
    )
    session = _Session(Path(store_path), batch_id, labeller.strip(), token, templates)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await session.store.open()
        try:
            session.positions = await session.store.call(
                lambda batches: {case.position: case.case_id for case in batches.cases(batch_id)}
            )
            session.rubric = await session.store.call(lambda batches: batches.info(batch_id).rubric)
            if session.rubric is None:
                session.specs = await session.store.call_store(
                    lambda store: run_specs(store, batch_id)
                )
            yield
        finally:
            await session.store.close()

    routes = [
        Route("/", session.home),
        Route("/case/{position:int}", session.case),
        Route("/next", session.next_case),
        Route("/done", session.done),
        Route("/api/label", session.label, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(_Guard, token=token)
    return app


class _StoreThread:
    """The results store, opened, used and closed on one worker thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor: ThreadPoolExecutor | None = None
        self._store: Store | None = None

    async def open(self) -> None:
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="toolscore-store")
        self._store = await self._run(lambda: open_store(self.path, create=False))

    async def call(self, work: Callable[[Batches], T]) -> T:
        """Run `work` with the store's batches on the store's thread."""
        return await self.call_store(lambda store: work(Batches.of(store)))

    async def call_store(self, work: Callable[[Store], T]) -> T:
        """Run `work` with the store on the store's thread."""
        store = self._store
        if store is None:
            raise RuntimeError("the store is opened by the app's lifespan, which has not run")
        return await self._run(lambda: work(store))

    async def close(self) -> None:
        store, executor = self._store, self._executor
        self._store = self._executor = None
        if executor is None:
            return
        if store is not None:
            await asyncio.get_running_loop().run_in_executor(executor, store.close)
        executor.shutdown()

    async def _run(self, work: Callable[[], T]) -> T:
        assert self._executor is not None
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)


@dataclass
class _Progress:
    """One labeller's labels of the batch, by case id, and the others' by labeller."""

    mine: dict[str, Label]
    others: dict[str, list[Label]]


@dataclass
class _Session:
    """One labeller's session on one batch: the routes' shared state and the routes."""

    store_path: Path
    batch_id: int
    labeller: str
    token: str
    templates: Jinja2Templates
    store: _StoreThread = field(init=False)
    positions: dict[int, str] = field(default_factory=dict)
    """The batch's case ids by position (a batch never changes once made)."""
    rubric: dict[str, Any] | None = None
    """A rubric batch's rubric (its items get the rubric page); None for calls."""
    specs: SpecSet | None = None
    """The batch's run's specs, for the rules of views made before views kept them; None
    when they no longer load (or the run is gone): such a view shows no rules."""

    def __post_init__(self) -> None:
        self.store = _StoreThread(self.store_path)

    async def home(self, request: Request) -> Response:
        """Resume: the first case this labeller has not labelled, or the summary when done."""
        position = await self.store.call(
            lambda batches: batches.next_unlabelled(self.batch_id, self.labeller)
        )
        return RedirectResponse("/done" if position is None else f"/case/{position}", 303)

    async def next_case(self, request: Request) -> Response:
        """The first unlabelled case after `?after=N` (wrapping round), or the summary."""
        try:
            after = int(request.query_params.get("after", "0"))
        except ValueError:
            after = 0
        progress = await self._progress()
        open_positions = [
            p for p, case_id in self.positions.items() if case_id not in progress.mine
        ]
        later = sorted(p for p in open_positions if p > after) or sorted(open_positions)
        return RedirectResponse(f"/case/{later[0]}" if later else "/done", 303)

    async def case(self, request: Request) -> Response:
        """One case: the compared plan beside the produced calls, the label buttons, and the
        scorers' verdicts once this labeller has labelled it."""
        position = int(request.path_params["position"])
        case = None
        if position in self.positions:  # else not asked: SQLite refuses integers beyond 64 bits
            case = await self.store.call(lambda batches: batches.case(self.batch_id, position))
        progress = await self._progress()
        if case is None:
            return self._render(
                request, "missing.html", {"position": position, **self._frame(progress)}, 404
            )
        label = progress.mine.get(case.case_id)
        ordered = sorted(self.positions)
        index = ordered.index(position) if position in ordered else -1
        context: dict[str, Any] = {
            **self._frame(progress),
            "position": position,
            "number": index + 1,
        }
        page: object
        if self.rubric is not None:
            template, page = "rubric.html", rubric_item_page(case, label, self.rubric)
        else:
            template, page = "case.html", case_page(case, label, self.specs)
            context["case_id"] = visible(case.case_id)
        context.update(
            page=page,
            label=label,
            labels=LABELS,
            max_note=MAX_NOTE,
            others=progress.others.get(case.case_id, []) if label is not None else [],
            prev=ordered[index - 1] if index > 0 else None,
            next=ordered[index + 1] if 0 <= index < len(ordered) - 1 else None,
        )
        return self._render(request, template, context)

    async def done(self, request: Request) -> Response:
        """The summary: counts of this labeller's labels and what to run next."""
        progress = await self._progress()
        counts = Counter(label.label for label in progress.mine.values())
        by_others = Counter(
            label.labeller for labels in progress.others.values() for label in labels
        )
        command = ["toolscore", "calibrate", str(self.batch_id)]
        if self.store_path != DEFAULT_PATH:
            command += ["--db", str(self.store_path)]
        context = {
            **self._frame(progress),
            "counts": [(name, counts.get(name, 0)) for name in LABELS],
            "others": sorted(by_others.items()),
            "command": shlex.join(command),
            "first": min(self.positions, default=None),
            "last": max(self.positions, default=None),
        }
        return self._render(request, "done.html", context)

    async def label(self, request: Request) -> Response:
        """Save one label: JSON `{"position" or "case_id", "label", "note"}`; 400 with a
        message when the case is not in the batch or the label is not one of LABELS."""
        length = request.headers.get("content-length", "")
        if not length.isdigit():
            return _error("a label request needs a Content-Length", 411)
        if int(length) > MAX_BODY:
            return _error(f"a label request is a JSON object of at most {MAX_BODY} bytes", 413)
        try:
            body = await request.body()
        except ClientDisconnect:
            _log_dropped(request)
            return Response(status_code=400)  # no one to read it
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            return _error("the body must be a JSON object")
        if not isinstance(data, dict):
            return _error("the body must be a JSON object")
        value, note = data.get("label"), data.get("note") or ""
        if not isinstance(value, str) or value not in LABELS:
            return _error(f"label: must be one of {', '.join(LABELS)}")
        if not isinstance(note, str):
            return _error("note: must be a string")
        if len(note) > MAX_NOTE:
            return _error(f"note: at most {MAX_NOTE} characters")
        case_id = self._case_of(data)
        if isinstance(case_id, Response):
            return case_id
        try:
            saved = await self.store.call(
                lambda batches: batches.set_label(
                    self.batch_id, case_id, self.labeller, value, note
                )
            )
        except InputError as error:
            return _error(f"{error.field}: {error.message}" if error.field else error.message)
        progress = await self._progress()
        return JSONResponse(
            {
                **saved.to_json(),
                "position": self._position_of(case_id),
                "labelled": len(progress.mine),
                "size": len(self.positions),
            }
        )

    def _case_of(self, data: dict[str, Any]) -> str | Response:
        """The case id a label request names, by position or id (an error response if none)."""
        position, case_id = data.get("position"), data.get("case_id")
        if position is None and case_id is None:
            return _error("name the case with position or case_id")
        if position is not None:
            if not isinstance(position, int) or isinstance(position, bool):
                return _error("position: must be a whole number")
            if position not in self.positions:
                return _error(f"position: batch {self.batch_id} has no case at {position}")
            if case_id is not None and case_id != self.positions[position]:
                return _error(f"case_id: {case_id!r} is not the case at position {position}")
            return self.positions[position]
        if not isinstance(case_id, str):
            return _error("case_id: must be a string")
        if case_id not in self.positions.values():
            return _error(f"case_id: {case_id!r} is not in batch {self.batch_id}")
        return case_id

    def _position_of(self, case_id: str) -> int:
        return next(p for p, known in self.positions.items() if known == case_id)

    async def _progress(self) -> _Progress:
        labels = await self.store.call(lambda batches: batches.labels(self.batch_id))
        mine: dict[str, Label] = {}
        others: dict[str, list[Label]] = {}
        for label in labels:
            if label.labeller == self.labeller:
                mine[label.case_id] = label
            else:
                others.setdefault(label.case_id, []).append(label)
        return _Progress(mine, others)

    def _frame(self, progress: _Progress) -> dict[str, Any]:
        """What every page shows around its content: batch, labeller, progress, token."""
        return {
            "batch": self.batch_id,
            "labeller": self.labeller,
            "labelled": len(progress.mine),
            "size": len(self.positions),
            "token": self.token,
            "rubric_batch": self.rubric is not None,
            "words": WORDS if self.rubric is not None else {name: name for name in LABELS},
        }

    def _render(
        self, request: Request, name: str, context: dict[str, Any], status: int = 200
    ) -> Response:
        return self.templates.TemplateResponse(request, name, context, status_code=status)


def run_specs(store: Store, batch_id: int) -> SpecSet | None:
    """The specs of the run a batch samples, or None when the run or its spec file is not
    there to read (the page then shows the rules its views keep, if any)."""
    try:
        return store.specs(store.run(Batches.of(store).info(batch_id).run_id))
    except InputError:  # a SpecError too
        return None


def _log_dropped(request: Request) -> None:
    """One line for a request whose body never arrived whole (not a traceback)."""
    client = f"{request.client.host}:{request.client.port}" if request.client else "a client"
    reason = request.scope.get("state", {}).get(
        DROPPED, "it closed the connection before sending the whole body"
    )
    LOGGER.warning(
        "toolscore label: %s %s from %s: %s; nothing saved",
        request.method,
        request.url.path,
        client,
        reason,
    )


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class _Guard:
    """Refuses (403, closing the connection) a request whose Host is not this server or that
    lacks the token; sets the token cookie on the first request that brought it in the query;
    adds SECURITY_HEADERS to every response."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1008})
            return
        request = Request(scope)
        server = scope.get("server")
        port = int(server[1]) if server and server[1] is not None else 0
        cookie = f"{COOKIE_PREFIX}{port}"
        if not _host_allowed(request.headers.get("host", ""), port):
            refusal = PlainTextResponse(
                f"403: this server answers only to 127.0.0.1:{port} and localhost:{port}\n", 403
            )
            await _refused(refusal)(scope, receive, send)
            return
        from_query = self._matches(request.query_params.get(TOKEN_PARAM))
        from_cookie = self._matches(request.cookies.get(cookie))
        from_header = self._matches(request.headers.get(TOKEN_HEADER))
        if request.method in ("GET", "HEAD"):
            allowed = from_query or from_cookie or from_header
        else:
            allowed = from_header and _same_origin(request.headers.get("origin"), port)
        if not allowed:
            refusal = PlainTextResponse(
                "403: open the address `toolscore label` printed: it carries this session's "
                "token\n",
                403,
            )
            await _refused(refusal)(scope, receive, send)
            return
        set_cookie = (
            f"{cookie}={self.token.decode()}; Path=/; HttpOnly; SameSite=Strict"
            if from_query and not from_cookie
            else None
        )

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
                if set_cookie is not None:
                    headers.append("set-cookie", set_cookie)
            await send(message)

        await self.app(scope, receive, send_secured)

    def _matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token)


def _secured(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    return response


def _refused(response: Response) -> Response:
    """A refusal, secured, that closes its connection: a client without the token holds none."""
    response.headers["Connection"] = "close"
    return _secured(response)


def _host_allowed(host: str, port: int) -> bool:
    """Whether a Host header names this server: 127.0.0.1 or localhost on its port."""
    names = {f"127.0.0.1:{port}", f"localhost:{port}"}
    if port == 80:
        names |= {"127.0.0.1", "localhost"}
    return host.lower() in names


def _same_origin(origin: str | None, port: int) -> bool:
    """Whether a request's Origin (when the browser sent one) is this server's."""
    if origin is None:
        return True
    return origin.lower() in {f"http://127.0.0.1:{port}", f"http://localhost:{port}"}
