"""A stub OpenAI-compatible chat-completions server on 127.0.0.1, for the openai backend's tests.

It speaks the wire format: ``POST /v1/chat/completions`` with a JSON body, a 200 whose body is a
chat completion (``choices[0].message.content``, ``finish_reason``, ``usage``), or an OpenAI error
object with the status given.  It records every request body, counts the requests in flight at
once (the most ever, for the concurrency bound) and notices a client that hangs up while it is
still delaying its answer (a cancelled request).
"""

from __future__ import annotations

import json
from typing import Any

from tests.loopback_http import LoopbackServer, Reply


def completion(
    content: str | None,
    *,
    prompt_tokens: int = 13,
    completion_tokens: int = 5,
    cached: int | None = None,
    finish_reason: str = "stop",
    model: str = "m",
) -> dict:
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": usage,
    }


def error(status: int, message: str) -> Reply:
    return Reply({"error": {"message": message, "type": "invalid_request_error", "code": None}}, status=status)


def ok(content: str | None, **kw: Any) -> Reply:
    return Reply(completion(content, **kw))


class StubServer(LoopbackServer):
    """Answers each ``POST /v1/chat/completions`` with ``responder(request_json)``; ``url`` is the API's base
    (``…/v1``)."""

    name = "stub-openai"

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        super().__init__()
        self.responder = lambda _r: ok('{"value": null, "evidence": []}')
        self.url += "/v1"

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        with self._lock:
            self.paths.append(path)
            self.headers.append(headers)
        if method != "POST" or path != "/v1/chat/completions":
            return error(404, f"no route {path}")
        request = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append(request)
        return self.responder(request)
