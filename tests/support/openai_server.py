"""A real HTTP server on 127.0.0.1 that answers in the OpenAI wire format, for tests.

Every test of an LLM or embedding path talks to this server through the real ``openai`` client
(or any HTTP client): requests go over a socket, responses are the shapes the OpenAI API returns.

- ``POST /v1/embeddings``: deterministic embeddings, a hashed bag of words normalised to unit
  length (:func:`hashed_embedding`), so texts sharing words are close. Honours ``dimensions`` and
  ``encoding_format`` (``float`` or ``base64``, which the ``openai`` client asks for by default).
  An empty string is refused with HTTP 400, as the OpenAI API does.
- ``POST /v1/chat/completions``: the content comes from the queue of scripted replies
  (:meth:`LocalOpenAIServer.add_chat_reply`) or, when the queue is empty, from
  ``chat_handler(request_json)``. ``response_format`` (``json_schema``/``json_object``) is
  accepted and the scripted content returned as is. ``stream: true`` answers as server-sent events.
  With nothing scripted the server answers HTTP 400 saying so, so a test fails loudly.
- ``GET /v1/models``: a model list.
- Faults: :meth:`LocalOpenAIServer.fail_next` answers the next ``n`` requests with an HTTP error
  (500, 429, 400, ...) in the OpenAI error shape; :meth:`LocalOpenAIServer.drop_next` closes the
  connection without answering (a connection error for the client).
- Every request is recorded in :attr:`LocalOpenAIServer.requests` (faulted ones too, flagged).

Usage::

    with LocalOpenAIServer() as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
        srv.add_chat_reply('{"plan": []}')
        ...
        assert len(srv.requests_to("/v1/embeddings")) == 3
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = [
    "ChatHandler",
    "LocalOpenAIServer",
    "RecordedRequest",
    "count_tokens",
    "hashed_embedding",
]

#: A chat handler gets the request's JSON body and returns the assistant's content (a string) or
#: a whole assistant message (a dict, e.g. with ``tool_calls``).
ChatHandler = Callable[[dict[str, Any]], str | dict[str, Any]]

_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)

#: Default vector sizes of OpenAI's embedding models; any other model gets ``default_dimensions``.
MODEL_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def count_tokens(text: str) -> int:
    """The server's token count: words and punctuation marks (used for ``usage``)."""
    return len(_WORD.findall(text))


def hashed_embedding(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector: each lower-cased word adds +-1 to a hashed coordinate."""
    vec = [0.0] * dimensions
    words = re.findall(r"\w+", text.lower(), re.UNICODE) or [text]
    for word in words:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        index = value % dimensions
        sign = 1.0 if (value >> 63) & 1 else -1.0
        vec[index] += sign
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0.0:  # only when every word cancelled out: fall back to one fixed coordinate
        vec[0] = 1.0
        return vec
    return [v / norm for v in vec]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    #: The HTTP status the server answered with (0 when the connection was dropped).
    status: int
    #: True when this request was answered by an injected fault.
    faulted: bool
    at: float = field(default_factory=time.monotonic)


@dataclass
class _Fault:
    status: int  # 0: drop the connection
    message: str
    retry_after_ms: int | None
    path: str | None


class _ApiError(Exception):
    def __init__(self, status: int, message: str, err_type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.err_type = err_type


class LocalOpenAIServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 (a free port), run in a background thread.

    Args:
        default_dimensions: vector size for embedding models not in :data:`MODEL_DIMENSIONS`.
        api_key: when set, requests without ``Authorization: Bearer <api_key>`` get HTTP 401.
        chat_handler: answers chat requests when no scripted reply is queued.
    """

    def __init__(
        self,
        *,
        default_dimensions: int = 384,
        api_key: str | None = None,
        chat_handler: ChatHandler | None = None,
    ) -> None:
        self.default_dimensions = default_dimensions
        self.api_key = api_key
        self.chat_handler: ChatHandler | None = chat_handler
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._replies: deque[str | dict[str, Any]] = deque()
        self._faults: deque[_Fault] = deque()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------------------- lifecycle

    def start(self) -> LocalOpenAIServer:
        if self._httpd is not None:
            return self
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LocalOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("LocalOpenAIServer is not running; use start() or a with block")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client, e.g. ``http://127.0.0.1:40123/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # ----------------------------------------------------------------------------- scripting

    def add_chat_reply(self, *replies: str | dict[str, Any]) -> None:
        """Queue chat replies, answered in order (a str is the content; a dict a whole message)."""
        with self._lock:
            self._replies.extend(replies)

    def clear_chat_replies(self) -> None:
        with self._lock:
            self._replies.clear()

    @property
    def pending_chat_replies(self) -> int:
        with self._lock:
            return len(self._replies)

    def fail_next(
        self,
        n: int = 1,
        status: int = 500,
        *,
        message: str | None = None,
        retry_after_ms: int | None = None,
        path: str | None = None,
    ) -> None:
        """Answer the next ``n`` requests (to ``path`` if given, e.g. ``/v1/embeddings``) with an
        HTTP ``status`` error in the OpenAI error shape. ``retry_after_ms`` adds the
        ``retry-after-ms`` header that the ``openai`` client honours (keeps retry tests fast)."""
        text = message or f"injected fault: HTTP {status} from LocalOpenAIServer"
        with self._lock:
            self._faults.extend(_Fault(status, text, retry_after_ms, path) for _ in range(n))

    def drop_next(self, n: int = 1, *, path: str | None = None) -> None:
        """Close the connection of the next ``n`` requests without any answer."""
        with self._lock:
            self._faults.extend(_Fault(0, "dropped", None, path) for _ in range(n))

    # ----------------------------------------------------------------------------- inspection

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str, *, include_faulted: bool = True) -> list[RecordedRequest]:
        """The recorded requests to one path, e.g. ``"/v1/embeddings"``."""
        return [r for r in self.requests if r.path == path and (include_faulted or not r.faulted)]

    def reset(self) -> None:
        """Forget recorded requests, queued replies and pending faults."""
        with self._lock:
            self._requests.clear()
            self._replies.clear()
            self._faults.clear()

    # ----------------------------------------------------------------------------- internals

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _take_fault(self, path: str) -> _Fault | None:
        with self._lock:
            for i, fault in enumerate(self._faults):
                if fault.path is None or fault.path == path:
                    del self._faults[i]
                    return fault
        return None

    def _next_reply(self, body: dict[str, Any]) -> str | dict[str, Any]:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
            handler = self.chat_handler
        if handler is None:
            raise _ApiError(
                400,
                "LocalOpenAIServer has no scripted reply for this chat request: "
                "call add_chat_reply(...) or set chat_handler before the request",
            )
        return handler(body)

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise _ApiError(400, "you must provide a model parameter")
        raw = body.get("input")
        if isinstance(raw, str):
            texts = [raw]
        elif isinstance(raw, list) and raw and all(isinstance(t, str) for t in raw):
            texts = list(raw)
        elif isinstance(raw, list) and raw and all(isinstance(t, int) for t in raw):
            texts = [" ".join(f"tok{t}" for t in raw)]
        elif (
            isinstance(raw, list)
            and raw
            and all(isinstance(t, list) and all(isinstance(i, int) for i in t) for t in raw)
        ):
            texts = [" ".join(f"tok{i}" for i in t) for t in raw]
        else:
            raise _ApiError(400, "'input' must be a non-empty string or array")
        if len(texts) > 2048:
            raise _ApiError(400, "'input' must have at most 2048 items")
        if any(t == "" for t in texts):
            raise _ApiError(400, "'$.input' is invalid: empty strings cannot be embedded")
        dims = body.get("dimensions")
        if dims is None:
            dims = MODEL_DIMENSIONS.get(model, self.default_dimensions)
        if not isinstance(dims, int) or dims < 1:
            raise _ApiError(400, "'dimensions' must be a positive integer")
        fmt = body.get("encoding_format", "float")
        if fmt not in ("float", "base64"):
            raise _ApiError(400, "'encoding_format' must be 'float' or 'base64'")
        data = []
        tokens = 0
        for i, text in enumerate(texts):
            vec = hashed_embedding(text, dims)
            tokens += count_tokens(text)
            embedding: list[float] | str
            if fmt == "base64":
                embedding = base64.b64encode(struct.pack(f"<{dims}f", *vec)).decode("ascii")
            else:
                embedding = vec
            data.append({"object": "embedding", "index": i, "embedding": embedding})
        return {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _chat(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
        """The completion object, and for ``stream: true`` the chunks to send instead."""
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise _ApiError(400, "you must provide a model parameter")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise _ApiError(400, "'messages' must be a non-empty array")
        reply = self._next_reply(body)
        if isinstance(reply, str):
            message: dict[str, Any] = {"role": "assistant", "content": reply, "refusal": None}
        else:
            message = {"role": "assistant", "content": None, "refusal": None, **reply}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        prompt_tokens = sum(_message_tokens(m) for m in messages)
        completion_tokens = _message_tokens(message)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        completion = {
            "id": cid,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_local",
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": usage,
        }
        if not body.get("stream"):
            return completion, None
        base = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_local",
        }
        delta = {k: v for k, v in message.items() if v is not None}
        if "tool_calls" in delta:
            delta["tool_calls"] = [
                {"index": i, **call} for i, call in enumerate(delta["tool_calls"])
            ]
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        ]
        options = body.get("stream_options") or {}
        if options.get("include_usage"):
            chunks.append({**base, "choices": [], "usage": usage})
        return completion, chunks


def _message_tokens(message: Any) -> int:
    if not isinstance(message, dict):
        return 0
    content = message.get("content")
    total = 0
    if isinstance(content, str):
        total += count_tokens(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                total += count_tokens(part["text"])
    for call in message.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        total += count_tokens(str(fn.get("name", ""))) + count_tokens(str(fn.get("arguments", "")))
    return total


def _make_handler(server: LocalOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "LocalOpenAIServer/1.0"

        def log_message(self, format: str, *args: Any) -> None:
            return  # keep test output clean

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            body: Any = None
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")

            fault = server._take_fault(path)
            if fault is not None and fault.status == 0:
                server._record(RecordedRequest(method, path, headers, body, 0, True))
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            status, payload, extra, chunks = self._answer(method, path, headers, body, fault)
            # Recorded before answering, so a client that got its answer sees its request here.
            server._record(RecordedRequest(method, path, headers, body, status, fault is not None))
            if chunks is not None:
                self._send_stream(chunks)
            else:
                self._send_json(status, payload, extra)

        def _answer(
            self,
            method: str,
            path: str,
            headers: dict[str, str],
            body: Any,
            fault: _Fault | None,
        ) -> tuple[int, Any, dict[str, str], list[dict[str, Any]] | None]:
            """(status, JSON payload, extra headers, SSE chunks or None) for one request."""
            if fault is not None:
                extra = {}
                if fault.retry_after_ms is not None:
                    extra["retry-after-ms"] = str(fault.retry_after_ms)
                return fault.status, _error(fault.message, _error_type(fault.status)), extra, None
            try:
                if server.api_key is not None and (
                    headers.get("authorization") != f"Bearer {server.api_key}"
                ):
                    raise _ApiError(401, "Incorrect API key provided", "invalid_api_key")
                if method == "GET" and path == "/v1/models":
                    return 200, _models(), {}, None
                if method == "POST" and path == "/v1/embeddings":
                    return 200, server._embeddings(_require_object(body)), {}, None
                if method == "POST" and path == "/v1/chat/completions":
                    completion, chunks = server._chat(_require_object(body))
                    return 200, completion, {}, chunks
                raise _ApiError(404, f"unknown endpoint {method} {path}", "not_found")
            except _ApiError as e:
                return e.status, _error(e.message, e.err_type), {}, None
            except Exception as e:  # a bug in a test's chat handler: answer 500, say what
                message = f"LocalOpenAIServer handler failed: {e!r}"
                return 500, _error(message, "server_error"), {"x-should-retry": "false"}, None

        def _send_json(
            self, status: int, payload: Any, extra_headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:16]}")
            for k, v in (extra_headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, chunks: list[dict[str, Any]]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def _error(message: str, err_type: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": err_type, "param": None, "code": None}}


def _require_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _ApiError(400, "the request body must be a JSON object")
    return body


def _error_type(status: int) -> str:
    if status == 429:
        return "rate_limit_exceeded"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def _models() -> dict[str, Any]:
    names = [*MODEL_DIMENSIONS, "gpt-4o-mini", "local-chat"]
    return {
        "object": "list",
        "data": [{"id": n, "object": "model", "created": 0, "owned_by": "local"} for n in names],
    }
