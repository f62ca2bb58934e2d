"""`command`: toolproof's protocol, unchanged — your own program picks the tool.

The program reads one JSON request on stdin (`model`, `system`, `prompt`, `tools` with `name`,
`description`, `input_schema`) and prints one JSON answer on stdout (`tool`, `args`, optional
`text`). It runs in the config file's folder.

In a trajectory case the request also carries `turns`: the calls so far, each `{"tool", "args",
"result"}` or `{"tool", "args", "error"}`, in order. The program answers the next call the same
way, several at once as `{"calls": [{"tool", "args"}, …]}`, or finishes with `{"tool": null,
"text": "…"}`. Its failures become that sample's ERROR in its own
words; a program that cannot be started stops the run. It is code from the pull request: it runs
as contain.py says (never as root, a small environment), in a process group of its own that is
stopped once it has answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..contain import Confinement, child_environment, confinement, unstartable
from ..errors import InfraError
from ..explain import show
from ..pick import Pick, ToolCall
from ..sweep import stop_group
from . import Provider, Request, SampleError

if TYPE_CHECKING:
    from .call import ModelCall

DEFAULT_TIMEOUT_S = 120.0


class CommandProvider(Provider):
    name = "command"
    produces_args = True
    cacheable = False  # the cache key can't see changes to your script (toolproof's rule)

    def __init__(
        self,
        command: tuple[str, ...],
        model: str,
        cwd: Path,
        timeout_s: float,
        env: Mapping[str, str] | None,
        confined: Confinement,
    ) -> None:
        super().__init__(model)
        self.command = command
        self.cwd = cwd
        self.timeout_s = timeout_s
        self.env = dict(env) if env is not None else None  # a small one: no keys, no tokens
        self.confined = confined
        self._startable = False  # checked before the first start

    async def pick(self, request: Request) -> Pick:
        payload = {
            "model": self.model,
            "system": request.system,
            "prompt": request.prompt,
            "tools": [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in request.tools
            ],
        }
        if request.history:
            payload["turns"] = [
                {"tool": call.tool, "args": call.args}
                | ({"error": stub.error} if stub.error is not None else {"result": stub.result})
                for turn in request.history
                for call, stub in zip(turn.calls, turn.stubs, strict=True)
            ]
        started = time.perf_counter()
        if not self._startable:
            if why := unstartable(self.command[0], self.env or os.environ, self.cwd):
                raise InfraError(
                    f"cannot start the command provider {show(' '.join(self.command), 80)} in {self.cwd}: {why}",
                    hint="check evals.command (it runs in the config file's folder); a script needs a #! line, or "
                    "use [python, pick.py]",
                )
            self._startable = True
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.confined.command(self.command),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
            )
        except OSError as exc:  # not found, not executable, no shebang (ENOEXEC), out of file handles…
            raise InfraError(
                f"cannot start the command provider {show(' '.join(self.command), 80)} in {self.cwd}: "
                f"{exc.strerror or exc}",
                hint=(
                    "check evals.command (it runs in the config file's folder); a script needs a #! line, or use "
                    "[python, pick.py]"
                ),
            ) from None
        try:
            out, err = await asyncio.wait_for(proc.communicate(json.dumps(payload).encode()), self.timeout_s)
        except TimeoutError:
            raise SampleError(f"command timed out after {self.timeout_s:g} s") from None
        finally:
            await stop_group(proc)  # with whatever it started in its group
        latency_ms = (time.perf_counter() - started) * 1000
        if proc.returncode != 0:
            tail = _tail(err) or _tail(out)
            raise SampleError(f"command exited {proc.returncode}" + (f": {tail}" if tail else ""))
        text = out.decode("utf-8", errors="replace").strip()
        try:
            answer = json.loads(text)
        except json.JSONDecodeError:
            raise SampleError(f"command printed invalid JSON: {show(text, 80)}") from None
        except RecursionError:
            raise SampleError("command printed JSON nested too deep to read") from None
        if not isinstance(answer, dict):
            raise SampleError(f"command must print a JSON object with 'tool' and 'args' (got {show(answer)})")
        listed = answer.get("calls")
        if listed is not None and (not isinstance(listed, list) or not all(isinstance(c, dict) for c in listed)):
            raise SampleError(f"'calls' must be a list of {{tool, args}} objects (got {show(listed)})")
        read = [_read_call(c) for c in listed] if listed is not None else [_read_call(answer)]
        calls = [c for c in read if c is not None]
        said = answer.get("text") or ""
        first = calls[0] if calls else None
        return Pick(
            tool=first.tool if first else None,
            args=first.args if first else None,
            raw_args=first.raw_args if first else None,
            text=said if isinstance(said, str) else str(said),
            calls=len(calls),
            latency_ms=latency_ms,
            tool_calls=tuple(calls) if listed is not None else (),
        )

    def identity(self) -> dict[str, Any]:
        return {"provider": "command", "command": list(self.command), "model": self.model}


def _read_call(answer: dict[str, Any]) -> ToolCall | None:
    tool = answer.get("tool")
    if tool is not None and not isinstance(tool, str):
        raise SampleError(f"'tool' must be a string or null (got {show(tool)})")
    args = answer.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise SampleError(f"'args' must be an object (got {show(args)})")
    return ToolCall(tool, args) if tool else None


def _tail(data: bytes, lines: int = 5) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return " | ".join(text.splitlines()[-lines:])[-500:]


def make(call: ModelCall, throttle: object = None, environ: Mapping[str, str] | None = None) -> CommandProvider:
    assert call.command  # the settings' resolution guarantees it
    return CommandProvider(
        command=call.command,
        model=call.model,
        cwd=call.cwd,
        timeout_s=call.timeout_s or DEFAULT_TIMEOUT_S,
        env=child_environment({}, os.environ if environ is None else environ),
        confined=confinement(os.environ if environ is None else environ),
    )
