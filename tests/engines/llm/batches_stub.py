"""A stub Anthropic API on 127.0.0.1 with the Message Batches endpoints (and Messages, for direct calls).

Wire format as the real API: ``POST /v1/messages/batches`` (``{"requests": [{"custom_id", "params"}]}``)
returns a ``message_batch`` object; ``GET /v1/messages/batches/{id}`` reports ``in_progress`` for
``polls`` polls, then ``ended`` with a ``results_url``; ``GET /v1/messages/batches/{id}/results`` is
JSONL, one ``{"custom_id", "result": {"type": "succeeded", "message": {...}}}`` a line.
``POST /v1/messages`` answers a direct call.  Every message's text is ``answer(params)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.loopback_http import LoopbackServer, Reply


def prompt_text(params: dict) -> str:
    """The user message's text of a Messages API request (a string, or text blocks)."""
    content = params["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content)


def message(text: str, model: str = "m") -> dict:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 30, "output_tokens": 8},
    }


def _not_found(what: str) -> Reply:
    return Reply({"type": "error", "error": {"type": "not_found_error", "message": what}}, status=404)


class BatchesStub(LoopbackServer):
    name = "stub-batches"

    def __init__(self, answer: Callable[[dict], str], *, polls: int = 1) -> None:
        self.answer = answer
        self.polls = polls  # polls reporting in_progress before a batch has ended
        self.batches: dict[str, dict[str, Any]] = {}
        self.direct: list[dict] = []
        self.retrievals = 0
        super().__init__()

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        if method == "POST":
            body = json.loads(raw or b"{}")
            if path == "/v1/messages/batches":
                with self._lock:
                    batch_id = f"msgbatch_{len(self.batches) + 1:04d}"
                    self.batches[batch_id] = {"requests": body["requests"], "polls": 0}
                return Reply(self.batch_object(batch_id))
            if path == "/v1/messages":
                with self._lock:
                    self.direct.append(body)
                return Reply(message(self.answer(body), body["model"]))
            return _not_found(path)
        parts = path.split("?")[0].strip("/").split("/")
        if parts[:3] != ["v1", "messages", "batches"] or len(parts) < 4 or parts[3] not in self.batches:
            return _not_found("no such batch")
        batch_id = parts[3]
        if len(parts) == 4:
            with self._lock:
                self.batches[batch_id]["polls"] += 1
                self.retrievals += 1
            return Reply(self.batch_object(batch_id))
        lines = [
            json.dumps(
                {
                    "custom_id": r["custom_id"],
                    "result": {"type": "succeeded", "message": message(self.answer(r["params"]), r["params"]["model"])},
                }
            )
            for r in self.batches[batch_id]["requests"]
        ]
        return Reply(("\n".join(lines) + "\n").encode(), content_type="application/binary")

    def ended(self, batch_id: str) -> bool:
        return self.batches[batch_id]["polls"] > self.polls

    def batch_object(self, batch_id: str) -> dict:
        n = len(self.batches[batch_id]["requests"])
        ended = self.ended(batch_id)
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n if ended else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": "2026-12-01T12:00:00Z",
            "expires_at": "2026-12-02T12:00:00Z",
            "ended_at": "2026-12-01T12:05:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{batch_id}/results" if ended else None,
        }

    def requests_in(self, batch_id: str) -> list[dict]:
        return [r["params"] for r in self.batches[batch_id]["requests"]]
