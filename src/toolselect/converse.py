"""The agent loop of a trajectory case: ask, answer every tool call from the case's stubs, ask again.

A `Conversation` is the loop's state, with no I/O of its own: `next_request()` gives the request
to send (the prompt and every earlier turn with the stubs' answers), `record(pick)` takes the
model's answer, until the model answers in text or `max_turns` answers have called tools. Tools are
never executed: each call is answered by the first unused matching mock of the case (the last one
repeats), a call to a tool the surface doesn't have by an error saying so, and any other call by
`trajectory.DEFAULT_RESULT`. The same loop runs live (ask.py) and over the answer cache alone
(budget.py), so a fully cached trajectory is known to be free before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .pick import Pick, ToolCall, Trace, TraceCall, Usage
from .providers import Request, Stub, Turn
from .surface import Surface
from .trajectory import Script, Stubs


class Conversation:
    def __init__(
        self, surface: Surface, request: Request, script: Script, from_wire: Callable[[str], str] | None = None
    ) -> None:
        self.surface = surface
        self.from_wire = from_wire or surface.from_wire  # a client's names map back their own way
        self.request = request
        self.script = script
        self.stubs = Stubs(script.mocks)
        self.history: list[Turn] = []
        self.calls: list[TraceCall] = []
        self.picks: list[Pick] = []
        self.final: str | None = None
        self.ended: Pick | None = None  # a turn that failed or was not asked ends the conversation

    @property
    def max_turns(self) -> int:
        return self.script.max_turns

    @property
    def done(self) -> bool:
        return self.ended is not None or self.final is not None or len(self.history) >= self.script.max_turns

    def next_request(self) -> Request | None:
        """The request for the next turn, or None when the conversation is over."""
        return None if self.done else replace(self.request, history=tuple(self.history), every_call=True)

    def record(self, pick: Pick) -> None:
        """The model's answer to the latest request."""
        if pick.error is not None or pick.skipped is not None:
            self.ended = pick
            return
        self.picks.append(pick)
        made = pick.all_calls
        if not made:
            self.final = pick.text
            return
        turn, at = len(self.history), sum(p.latency_ms or 0.0 for p in self.picks)  # the model's time so far
        stubs = []
        for call in made:
            tool = self.from_wire(call.tool)
            stub = self._answer(tool, call)
            stubs.append(stub)
            self.calls.append(TraceCall(turn, tool, call.args, call.raw_args, stub.result, stub.error, round(at, 1)))
        self.history.append(Turn(pick.text, made, tuple(stubs), pick.replay))

    def _answer(self, tool: str, call: ToolCall) -> Stub:
        if self.surface.get(tool) is None:
            return Stub(error=f"unknown tool '{tool}': it is not on this server")
        if call.args is None and call.raw_args is not None:
            return Stub(error="the arguments are not valid JSON")
        mock = self.stubs.answer(tool, call.args)
        return Stub(result=mock.result) if mock.error is None else Stub(error=mock.error)

    def outcome(self) -> Pick:
        """The sample's pick: its first call (for the confusion matrix), the final text, and the trace."""
        trace = Trace(
            calls=tuple(self.calls), final=self.final, turns=len(self.picks), hit_max_turns=self.final is None
        )
        if self.ended is not None:  # a failed turn: the sample is ERROR (or not asked), its trace so far kept
            return replace(self.ended, trace=replace(trace, hit_max_turns=False) if self.calls else None)
        first = self.calls[0] if self.calls else None
        usages = [p.usage for p in self.picks if p.usage]
        return Pick(
            tool=first.tool if first else None,
            args=first.args if first else None,
            raw_args=first.raw_args if first else None,
            text=self.final or "",
            calls=len(self.calls),
            latency_ms=sum(p.latency_ms or 0.0 for p in self.picks),
            usage=sum(usages, Usage(0, 0)) if usages else None,
            stop_reason=self.picks[-1].stop_reason if self.picks else None,
            cached=bool(self.picks) and all(p.cached for p in self.picks),
            trace=trace,
        )
