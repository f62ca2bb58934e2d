"""The two batch APIs, for the fake model API (model_api.py), as the real SDKs call them.

Anthropic's Message Batches: `POST /v1/messages/batches` ({requests: [{custom_id, params}]}), `GET
/v1/messages/batches/{id}` (processing_status in_progress → ended, request_counts), `POST …/cancel`
(canceling, then ended with the unprocessed requests canceled) and `GET …/results` (JSONL, one
`{custom_id, result: {type: succeeded | errored | canceled | expired, …}}` per request, in no set order).

OpenAI's Batch API: `POST /v1/files` (multipart, purpose batch: a JSONL file of `{custom_id, method,
url, body}` lines), `POST /v1/batches` ({input_file_id, endpoint, completion_window}), `GET
/v1/batches/{id}` (validating → in_progress → completed, request_counts {total, completed, failed},
output_file_id and error_file_id), `POST …/cancel` (cancelling, then cancelled) and `GET
/v1/files/{id}/content`. An output line is `{id, custom_id, response: {status_code, request_id, body},
error: null}`; a request that failed goes to the error file with its status and body, one never run
with `response: null, error: {code: batch_expired | batch_cancelled, message}`. A file whose lines
name another endpoint or mix models fails the batch (status failed, errors.data).

Each request is answered as the synchronous endpoint would answer it (its script, faults, prompt
cache and usage). A batch is worked through after it is created, in the background, in the order
sent, `workers` requests at a time — a batch API runs a batch over minutes, not all at once, which is
why the requests of one prefix mostly read the prompt cache (Anthropic calls cache hits in a batch
best effort). It ends at its `polls`-th retrieval (which waits until every request it will run has run); a
cancel stops it taking new requests. Script key `batch`:
  {"polls": 1}          retrievals before the batch has ended (default 1)
  {"workers": 4}        requests answered at once (default 4)
  {"process": N}        only the first N requests are run; the rest expire (or, once cancelled, are canceled)
  {"never_ends": true}  the batch stays in progress until it is cancelled
  {"missing": true}     no batch API here: 404, as a compatible server without one answers
"""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

# answers one request as its synchronous endpoint would: (HTTP status, JSON payload)
Answer = Callable[[str, dict[str, str], dict[str, Any]], Awaitable[tuple[int, Any]]]
EXPIRED = "This request could not be executed before the completion window expired."
CANCELLED = "This request was not executed because the batch was cancelled."


@dataclass
class Batch:
    id: str
    api: str  # "anthropic" or "openai"
    ids: list[str]  # custom ids, in the order sent
    results: dict[str, tuple[int, Any] | None]  # custom id → (status, payload); None: never run
    created: float
    endpoint: str = ""  # OpenAI's
    input_file_id: str = ""
    polls_left: int = 1
    never_ends: bool = False
    cancelling: bool = False
    ended: bool = False
    failed: list[dict[str, Any]] = field(default_factory=list)  # OpenAI validation errors
    output_file_id: str | None = None
    error_file_id: str | None = None
    work: asyncio.Task[None] | None = None  # answering its requests, in the background


class Batches:
    def __init__(self, script: dict[str, Any], base_url: Callable[[], str]) -> None:
        self.script = script.get("batch", {})
        self.base_url = base_url
        self.batches: dict[str, Batch] = {}
        self.files: dict[str, tuple[str, str, bytes]] = {}  # id → (filename, purpose, content)
        self.counter = itertools.count(1)
        self.created: list[str] = []  # batch ids, in order (tests read them)

    @staticmethod
    def handles(path: str) -> bool:
        route = path.split("?")[0]
        return "/v1/messages/batches" in route or "/v1/batches" in route or "/v1/files" in route

    async def handle(
        self, method: str, path: str, headers: dict[str, str], raw: bytes, answer: Answer
    ) -> tuple[int, Any, str]:
        """(status, payload, content type): a JSON payload, or JSONL text."""
        route = path.split("?")[0]
        api = "anthropic" if "/v1/messages/batches" in route else "openai"
        if self.script.get("missing"):
            return 404, _error(api, 404, f"no route {route}"), "application/json"
        tail = route.split("/v1/messages/batches" if api == "anthropic" else "/v1/", 1)[1].strip("/")
        parts = tail.split("/") if tail else []
        if api == "anthropic":
            if method == "POST" and not parts:
                return 200, await self._create_anthropic(json.loads(raw or b"{}"), headers, answer), "application/json"
            batch = self.batches.get(parts[0]) if parts else None
            if batch is None or batch.api != "anthropic":
                return 404, _error(api, 404, "batch not found"), "application/json"
            if method == "GET" and len(parts) == 1:
                await self._poll(batch)
                return 200, self._anthropic_view(batch), "application/json"
            if method == "POST" and parts[1:] == ["cancel"]:
                batch.cancelling = True
                return 200, self._anthropic_view(batch), "application/json"
            if method == "GET" and parts[1:] == ["results"]:
                if not batch.ended:
                    return 400, _error(api, 400, "batch has not ended"), "application/json"
                return 200, self._anthropic_results(batch), "application/binary"
            return 404, _error(api, 404, f"no route {route}"), "application/json"
        # OpenAI: files and batches
        if parts[:1] == ["files"]:
            if method == "POST" and len(parts) == 1:
                return 200, self._upload(headers, raw), "application/json"
            known = self.files.get(parts[1]) if len(parts) > 1 else None
            if known is None:
                return 404, _error(api, 404, "No such File object"), "application/json"
            if method == "GET" and parts[2:] == ["content"]:
                return 200, known[2].decode(), "application/jsonl"
            return 404, _error(api, 404, f"no route {route}"), "application/json"
        if method == "POST" and parts == ["batches"]:
            return await self._create_openai(json.loads(raw or b"{}"), headers, answer)
        batch = self.batches.get(parts[1]) if len(parts) > 1 else None
        if batch is None or batch.api != "openai":
            return 404, _error(api, 404, "No batch found"), "application/json"
        if method == "GET" and len(parts) == 2:
            await self._poll(batch)
            return 200, self._openai_view(batch), "application/json"
        if method == "POST" and parts[2:] == ["cancel"]:
            batch.cancelling = True
            return 200, self._openai_view(batch), "application/json"
        return 404, _error(api, 404, f"no route {route}"), "application/json"

    # ------------------------------------------------------------------ running a batch

    def _new(self, prefix: str) -> str:
        return f"{prefix}{next(self.counter):06d}"

    def _start(
        self, batch: Batch, items: list[tuple[str, str, dict[str, Any]]], headers: dict[str, str], answer: Answer
    ) -> None:
        """Answer the first `process` of (custom id, path, body), in order, `workers` at a time, until the
        batch is cancelled; the rest are never run (None)."""
        batch.results = {cid: None for cid, _, _ in items}
        queue = iter(items[: self.script.get("process", len(items))])

        async def worker() -> None:
            for cid, path, body in queue:
                if batch.cancelling:
                    return
                batch.results[cid] = await answer(path, headers, body)

        async def work() -> None:
            await asyncio.gather(*(worker() for _ in range(self.script.get("workers", 4))))

        batch.work = asyncio.ensure_future(work())

    async def _poll(self, batch: Batch) -> None:
        """A retrieval: the `polls`-th one ends the batch (waiting for its requests to be answered, so
        a test's count of retrievals means the same on a loaded machine); a cancelled batch ends at the
        next retrieval, once its requests in flight are answered; never_ends never ends by itself."""
        if batch.ended:
            return
        if batch.cancelling or (not batch.never_ends and batch.polls_left <= 1):
            if batch.work is not None:
                await asyncio.shield(batch.work)
            batch.ended = True
            if batch.api == "openai":
                self._write_files(batch)
            return
        batch.polls_left -= 1

    async def _create_anthropic(self, body: dict[str, Any], headers: dict[str, str], answer: Answer) -> Any:
        requests = body.get("requests") or []
        items = [(r["custom_id"], "/v1/messages", dict(r["params"])) for r in requests]
        batch = Batch(
            self._new("msgbatch_"),
            "anthropic",
            [cid for cid, _, _ in items],
            {},
            time.time(),
            polls_left=self.script.get("polls", 1),
            never_ends=bool(self.script.get("never_ends")),
        )
        self.batches[batch.id] = batch
        self.created.append(batch.id)
        self._start(batch, items, headers, answer)
        return self._anthropic_view(batch)

    def _anthropic_view(self, batch: Batch) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for out in batch.results.values():
            if out is None and not batch.ended:
                counts["processing"] += 1
            elif out is None:
                counts["canceled" if batch.cancelling else "expired"] += 1
            else:
                counts["succeeded" if out[0] == 200 else "errored"] += 1
        created = datetime.fromtimestamp(batch.created, UTC)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if batch.ended else ("canceling" if batch.cancelling else "in_progress"),
            "request_counts": counts,
            "created_at": created.isoformat(),
            "expires_at": (created + timedelta(hours=24)).isoformat(),
            "ended_at": datetime.now(UTC).isoformat() if batch.ended else None,
            "cancel_initiated_at": created.isoformat() if batch.cancelling else None,
            "archived_at": None,
            "results_url": f"{self.base_url()}/v1/messages/batches/{batch.id}/results" if batch.ended else None,
        }

    def _anthropic_results(self, batch: Batch) -> str:
        lines = []
        for cid in reversed(batch.ids):  # results come in no set order: never the order sent
            out = batch.results[cid]
            if out is None:
                result: dict[str, Any] = {"type": "canceled" if batch.cancelling else "expired"}
            elif out[0] == 200:
                result = {"type": "succeeded", "message": out[1]}
            else:
                result = {"type": "errored", "error": out[1]}
            lines.append(json.dumps({"custom_id": cid, "result": result}))
        return "\n".join(lines) + "\n"

    def _upload(self, headers: dict[str, str], raw: bytes) -> dict[str, Any]:
        head = f"Content-Type: {headers.get('content-type', '')}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            fields[str(name)] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
        filename, content = fields.get("file", ("upload", b""))
        purpose = fields.get("purpose", (None, b""))[1].decode()
        return self._file(filename or "upload.jsonl", purpose, content)

    def _file(self, filename: str, purpose: str, content: bytes) -> dict[str, Any]:
        file_id = self._new("file-")
        self.files[file_id] = (filename, purpose, content)
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }

    async def _create_openai(
        self, body: dict[str, Any], headers: dict[str, str], answer: Answer
    ) -> tuple[int, Any, str]:
        known = self.files.get(str(body.get("input_file_id")))
        if known is None:
            return 400, _error("openai", 400, f"File {body.get('input_file_id')} not found"), "application/json"
        endpoint = str(body.get("endpoint"))
        lines = [json.loads(line) for line in known[2].decode().splitlines() if line.strip()]
        batch = Batch(
            self._new("batch_"),
            "openai",
            [str(line.get("custom_id")) for line in lines],
            {},
            time.time(),
            endpoint=endpoint,
            input_file_id=str(body.get("input_file_id")),
            polls_left=self.script.get("polls", 1),
            never_ends=bool(self.script.get("never_ends")),
        )
        models = {line.get("body", {}).get("model") for line in lines}
        for n, line in enumerate(lines, 1):
            if line.get("url") != endpoint:
                batch.failed.append(
                    {
                        "code": "mismatched_endpoint",
                        "line": n,
                        "param": "url",
                        "message": f"The url {line.get('url')} does not match the batch's {endpoint}",
                    }
                )
        if len(models) > 1:
            batch.failed.append(
                {
                    "code": "mismatched_model",
                    "line": None,
                    "param": "body.model",
                    "message": "All requests in a batch must use the same model",
                }
            )
        if len(set(batch.ids)) != len(batch.ids):
            batch.failed.append(
                {
                    "code": "duplicate_custom_id",
                    "line": None,
                    "param": "custom_id",
                    "message": "custom_id values must be unique",
                }
            )
        self.batches[batch.id] = batch
        self.created.append(batch.id)
        if batch.failed:
            batch.ended = True
        else:
            self._start(
                batch, [(str(line["custom_id"]), endpoint, dict(line["body"])) for line in lines], headers, answer
            )
        return 200, self._openai_view(batch), "application/json"

    def _write_files(self, batch: Batch) -> None:
        out: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for n, cid in enumerate(batch.ids):
            result = batch.results.get(cid)
            if result is None:
                code, message = ("batch_cancelled", CANCELLED) if batch.cancelling else ("batch_expired", EXPIRED)
                line: dict[str, Any] = {
                    "id": f"batch_req_{n:06d}",
                    "custom_id": cid,
                    "response": None,
                    "error": {"code": code, "message": message},
                }
                errors.append(line)
                continue
            status, payload = result
            line = {
                "id": f"batch_req_{n:06d}",
                "custom_id": cid,
                "response": {"status_code": status, "request_id": f"req_{n:06d}", "body": payload},
                "error": None,
            }
            (out if status == 200 else errors).append(line)
        if out:
            batch.output_file_id = self._file("batch_output.jsonl", "batch_output", _jsonl(out))["id"]
        if errors:
            batch.error_file_id = self._file("batch_errors.jsonl", "batch_output", _jsonl(errors))["id"]

    def _openai_view(self, batch: Batch) -> dict[str, Any]:
        created = int(batch.created)
        done = [r for r in batch.results.values() if r is not None]
        if batch.failed:
            status = "failed"
        elif batch.ended:
            status = "cancelled" if batch.cancelling else ("completed" if all(batch.results.values()) else "expired")
        elif batch.cancelling:
            status = "cancelling"
        else:
            status = "validating" if batch.polls_left == self.script.get("polls", 1) else "in_progress"
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "errors": {"object": "list", "data": batch.failed} if batch.failed else None,
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": created,
            "in_progress_at": created if not batch.failed else None,
            "expires_at": created + 86400,
            "completed_at": int(time.time()) if status == "completed" else None,
            "failed_at": created if batch.failed else None,
            "expired_at": int(time.time()) if status == "expired" else None,
            "cancelling_at": created if batch.cancelling else None,
            "cancelled_at": int(time.time()) if status == "cancelled" else None,
            "request_counts": {
                "total": len(batch.ids),
                "completed": sum(1 for r in done if r[0] == 200),
                "failed": sum(1 for r in done if r[0] != 200) + (len(batch.ids) - len(done) if batch.ended else 0),
            },
            "metadata": None,
        }


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode()


def _error(api: str, status: int, message: str) -> dict[str, Any]:
    if api == "anthropic":
        kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
