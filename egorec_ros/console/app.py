"""The console's web app (Starlette): the page and its own JS/CSS (package data, no CDN, no build
step), live recorder state as server-sent events, JPEG previews, control through the recorder's
services, the task's episodes, Review (videos with HTTP Range, depth as a server-made preview,
a timeline) and the thumbnail strip after a stop.

Security: every state-changing request needs the token (header ``X-Egorec-Token``); when the
console listens beyond loopback every request but the page and its assets needs it too (header,
or ``?token=`` for <video> and EventSource, which cannot send headers). Files come only from
inside the current task folder (``console.paths``)."""
from __future__ import annotations

import asyncio
import hmac
import json
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from egorec_ros.console import review
from egorec_ros.console.link import RecorderLink
from egorec_ros.console.paths import PathRefused, task_file
from egorec_ros.dataset.task import Task

STATIC = {"console.js": "text/javascript", "console.css": "text/css"}
EVENT_PERIOD_S = 0.2
TOKEN_HEADER = "X-Egorec-Token"


@dataclass
class ConsoleState:
    link: RecorderLink
    out: Path                        # the recorder's dataset root (its --out)
    token: str
    open_reads: bool                 # loopback: reading needs no token
    cache: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="egorec-console-")))
    _event: tuple[float, str] = field(default=(-1e9, ""), init=False, repr=False)   # (monotonic time, JSON)
    listeners: int = 0               # pages with the live events open
    stopping: bool = False           # the server is asked to stop: live event streams end

    def event_json(self) -> str:
        """The live state as compact JSON, built at most once per event period however many pages
        listen (each build decodes the status, diagnostics and sensor messages)."""
        now = time.monotonic()
        if now - self._event[0] >= EVENT_PERIOD_S / 2:
            self._event = (now, json.dumps(self.link.snapshot(), separators=(",", ":")))
        return self._event[1]

    def task_dir(self, task: str | None = None) -> Path:
        name = task or self.current_task()
        if not name or Path(name).is_absolute() or ".." in Path(name).parts:
            raise PathRefused(f"task {name!r}: not a task folder under {self.out}")
        return self.out / name

    def current_task(self) -> str:
        status = self.link.snapshot()["status"]
        return str(status["task"]) if status else ""


def _static(name: str) -> bytes:
    return resources.files("egorec_ros.console").joinpath("static").joinpath(name).read_bytes()   # one part a call: 3.10


def _token_ok(request: Request, token: str) -> bool:
    given = request.headers.get(TOKEN_HEADER) or request.query_params.get("token") or ""
    return hmac.compare_digest(given.encode(), token.encode())


def build_app(state: ConsoleState) -> Starlette:
    Handler = Callable[[Request], Awaitable[Response]]

    def guarded(handler: Handler, *, write: bool = False) -> Handler:
        async def wrapped(request: Request) -> Response:
            if (write or not state.open_reads) and not _token_ok(request, state.token):
                return JSONResponse({"error": "this request needs the console's token (printed when it started)"},
                                    status_code=403)
            try:
                return await handler(request)
            except PathRefused as exc:
                return JSONResponse({"error": str(exc)}, status_code=404)
            except KeyError as exc:
                return JSONResponse({"error": str(exc).strip("'\"")}, status_code=404)
            except TimeoutError as exc:
                return JSONResponse({"error": str(exc)}, status_code=504)
        return wrapped

    async def page(_request: Request) -> Response:
        return Response(_static("index.html"), media_type="text/html",
                        headers={"Cache-Control": "no-store", "Content-Security-Policy":
                                 "default-src 'self'; img-src 'self' data: blob:; media-src 'self'"})

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return Response(status_code=404)
        return Response(_static(name), media_type=STATIC[name])

    async def events(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            state.listeners += 1
            state.link.listening(True)
            try:
                while not state.stopping and not await request.is_disconnected():
                    yield f"data: {state.event_json()}\n\n"
                    await asyncio.sleep(EVENT_PERIOD_S)
            finally:
                state.listeners -= 1
                if not state.listeners:
                    state.link.listening(False)
        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    async def preview(request: Request) -> Response:
        p = state.link.preview(request.path_params["stream"])
        if p is None:
            return Response(status_code=404)
        return Response(p.jpeg, media_type="image/jpeg",
                        headers={"Cache-Control": "no-store", "X-Stamp-Ns": str(p.stamp_ns)})

    async def call(service: str, **fields: Any) -> Response:
        reply = await run_in_threadpool(state.link.call, service, **fields)
        return JSONResponse(reply, status_code=200 if reply.get("success") else 409)

    async def body(request: Request) -> dict:
        try:
            doc = await request.json()
        except ValueError:
            return {}
        return doc if isinstance(doc, dict) else {}

    async def start(request: Request) -> Response:
        doc = await body(request)
        return await call("start", task=str(doc.get("task", "")).strip(),
                          instruction=str(doc.get("instruction", "")).strip())

    async def stop(_request: Request) -> Response:
        return await call("stop")

    async def abort(_request: Request) -> Response:
        return await call("abort")

    async def delete(request: Request) -> Response:
        doc = await body(request)
        try:
            index = int(doc.get("episode_index", 0))
        except (TypeError, ValueError):
            return JSONResponse({"error": "episode_index must be an integer"}, status_code=400)
        return await call("delete", episode_index=index)

    async def episodes(request: Request) -> Response:
        return await call("list_episodes", task=request.query_params.get("task", ""))

    def _task(request: Request) -> Task:
        return Task(state.task_dir(request.query_params.get("task")))

    async def episode_review(request: Request) -> Response:
        index = int(request.path_params["index"])

        def build() -> dict:
            task = _task(request)
            vids = review.videos(task, index)
            for v in vids:
                v["url"] = (f"files/{v['path']}" if v["playable"]
                            else f"preview-video/{index}/{v['key']}.mp4?task={task.root.name}")
            return {"task": task.root.name, "episode_index": index, "videos": vids,
                    "timeline": review.timeline(task, index)}
        return JSONResponse(await run_in_threadpool(build))

    async def thumbnails(request: Request) -> Response:
        index = int(request.path_params["index"])
        return JSONResponse(await run_in_threadpool(lambda: review.thumbnails(_task(request), index)))

    async def files(request: Request) -> Response:
        path = task_file(state.task_dir(request.query_params.get("task")), request.path_params["path"])
        return FileResponse(path, media_type="video/mp4" if path.suffix == ".mp4" else "video/x-matroska")

    async def preview_video(request: Request) -> Response:
        index, key = int(request.path_params["index"]), request.path_params["key"]
        task = _task(request)
        if key not in task.video_extensions:
            raise PathRefused(f"no video stream {key!r} in task {task.root.name}")
        out = state.cache / task.root.name / f"{index}-{key}.mp4"
        await run_in_threadpool(review.preview_video, task, index, key, out)
        return FileResponse(out, media_type="video/mp4")

    routes = [
        Route("/", page),
        Route("/static/{name}", static),
        Route("/events", guarded(events)),
        Route("/preview/{stream}", guarded(preview)),
        Route("/api/start", guarded(start, write=True), methods=["POST"]),
        Route("/api/stop", guarded(stop, write=True), methods=["POST"]),
        Route("/api/abort", guarded(abort, write=True), methods=["POST"]),
        Route("/api/delete", guarded(delete, write=True), methods=["POST"]),
        Route("/api/episodes", guarded(episodes)),
        Route("/api/episodes/{index:int}/review", guarded(episode_review)),
        Route("/api/episodes/{index:int}/thumbnails", guarded(thumbnails)),
        Route("/files/{path:path}", guarded(files)),
        Route("/preview-video/{index:int}/{key}.mp4", guarded(preview_video)),
    ]
    return Starlette(routes=routes)
