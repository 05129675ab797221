"""A stub Anthropic API on 127.0.0.1 with the Message Batches endpoints (and Messages, for direct calls).

Wire format as the real API: ``POST /v1/messages/batches`` (``{"requests": [{"custom_id", "params"}]}``)
returns a ``message_batch`` object; ``GET /v1/messages/batches/{id}`` reports ``in_progress`` for
``polls`` polls, then ``ended`` with a ``results_url``; ``GET /v1/messages/batches/{id}/results`` is
JSONL, one ``{"custom_id", "result": {"type": "succeeded", "message": {...}}}`` a line.
``POST /v1/messages`` answers a direct call.  Every message's text is ``answer(params)``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


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


class BatchesStub:
    def __init__(self, answer: Callable[[dict], str], *, polls: int = 1) -> None:
        self.answer = answer
        self.polls = polls  # polls reporting in_progress before a batch has ended
        self.batches: dict[str, dict[str, Any]] = {}
        self.direct: list[dict] = []
        self.retrievals = 0
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw or b"{}")
                if self.path == "/v1/messages/batches":
                    with stub._lock:
                        batch_id = f"msgbatch_{len(stub.batches) + 1:04d}"
                        stub.batches[batch_id] = {"requests": body["requests"], "polls": 0}
                    self._send(200, json.dumps(stub.batch_object(batch_id)).encode())
                elif self.path == "/v1/messages":
                    with stub._lock:
                        stub.direct.append(body)
                    self._send(200, json.dumps(message(stub.answer(body), body["model"])).encode())
                else:
                    self._send(
                        404,
                        json.dumps(
                            {"type": "error", "error": {"type": "not_found_error", "message": self.path}}
                        ).encode(),
                    )

            def do_GET(self) -> None:
                parts = self.path.split("?")[0].strip("/").split("/")
                if parts[:3] != ["v1", "messages", "batches"] or len(parts) < 4 or parts[3] not in stub.batches:
                    self._send(
                        404,
                        json.dumps(
                            {"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}
                        ).encode(),
                    )
                    return
                batch_id = parts[3]
                if len(parts) == 4:
                    with stub._lock:
                        stub.batches[batch_id]["polls"] += 1
                        stub.retrievals += 1
                    self._send(200, json.dumps(stub.batch_object(batch_id)).encode())
                else:
                    lines = [
                        json.dumps(
                            {
                                "custom_id": r["custom_id"],
                                "result": {
                                    "type": "succeeded",
                                    "message": message(stub.answer(r["params"]), r["params"]["model"]),
                                },
                            }
                        )
                        for r in stub.batches[batch_id]["requests"]
                    ]
                    self._send(200, ("\n".join(lines) + "\n").encode(), "application/binary")

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

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

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
