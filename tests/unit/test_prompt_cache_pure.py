"""The prompt cache's pure parts: shared seeded orders, warm-first scheduling, the requests' cache
markup, the fake's billing model, and what the bill costs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.builders import RUN, settings
from tests.fakes.prompt_cache import PromptCache, TooManyBreakpoints
from toolselect.ask import plan, warm_first
from toolselect.config import Overrides
from toolselect.golden import Case, Source
from toolselect.pick import ToolCall, Usage
from toolselect.prices import cached_share, cost_usd, price_for
from toolselect.providers import Request, Stub, Turn, WireTool
from toolselect.providers.anthropic import messages
from toolselect.providers.openai import ChatProvider, is_openai
from toolselect.render.common import bill
from toolselect.throttle import Throttle

CASES = [Case(f"c{i}", f"prompt {i}", None, {}, Source("g.jsonl", i + 1)) for i in range(20)]


def test_every_case_sees_the_same_seeded_order_at_each_sample_index():
    jobs = plan(CASES, 3, tools=8, shuffle=True, seed=4)
    orders = {(j.sample, j.order) for j in jobs}
    assert len(orders) == 3  # one order per sample index, whatever the case
    assert len({o for _, o in orders}) == 3 and all(sorted(o or ()) == list(range(8)) for _, o in orders)
    assert jobs == plan(CASES, 3, tools=8, shuffle=True, seed=4)  # the same seed, the same orders
    assert {j.order for j in plan(CASES, 3, tools=8, shuffle=True, seed=5)} != {o for _, o in orders}
    assert {j.order for j in plan(CASES, 3, tools=8)} == {None}


def test_the_first_job_of_each_order_goes_first_then_the_rest_as_planned():
    jobs = plan(CASES[:4], 3, tools=8, shuffle=True, seed=4)
    order = warm_first(jobs)
    assert sorted(order) == list(range(len(jobs)))
    assert order[:3] == [0, 1, 2]  # case 0's three samples: one per order
    assert order[3:] == list(range(3, len(jobs)))
    unshuffled = plan(CASES[:4], 2)
    assert warm_first(unshuffled) == list(range(len(unshuffled)))


def test_anthropic_marks_the_last_result_of_a_conversation_for_the_next_turn():
    tools = (WireTool("a", "A", {"type": "object"}),)
    turn = Turn(calls=(ToolCall("a", {}), ToolCall("a", {"n": 2})), text="", stubs=(Stub("ok"), Stub("ok too")))
    first = Request("hi", None, tools)
    assert messages(first, cached=True) == [{"role": "user", "content": "hi"}]  # the prompt varies: no mark
    later = messages(replace(first, history=(turn,)), cached=True)
    assert [b.get("cache_control") for b in later[-1]["content"]] == [None, {"type": "ephemeral"}]  # the last only
    assert "cache_control" not in str(messages(replace(first, history=(turn,))))


def test_only_openais_own_endpoint_gets_a_prompt_cache_key(tmp_path):
    assert is_openai("https://api.openai.com/v1") and not is_openai("http://127.0.0.1:8080/v1")
    assert not is_openai("https://api.openai.com.evil.example/v1")
    tools = (WireTool("a", "A", {"type": "object"}),)
    made = {}
    for url in ("https://api.openai.com/v1", "http://localhost:8000/v1"):
        _, s = settings(tmp_path, Overrides({"provider": "openai", "model": "gpt-4.1", "base_url": url}))
        made[url] = ChatProvider(s.call, Throttle(1), {})
    official = made["https://api.openai.com/v1"]
    key = official.cache_key(Request("p", "sys", tools))
    assert key["prompt_cache_key"].startswith("toolselect-")
    assert official.cache_key(Request("other prompt", "sys", tools)) == key  # per tool list, not per prompt
    assert official.cache_key(Request("p", "sys", (*tools, WireTool("b", "B", {})))) != key
    assert made["http://localhost:8000/v1"].cache_key(Request("p", "sys", tools)) == {}


def test_the_fake_bills_a_prefix_only_after_its_first_answer_and_until_it_expires():
    cache = PromptCache(min_tokens=100, ttl_s=300)
    tools = [{"name": f"t{i}", "description": "x" * 200, "input_schema": {}} for i in range(4)]
    body = {"tools": [*tools[:-1], {**tools[-1], "cache_control": {"type": "ephemeral"}}], "messages": [
        {"role": "user", "content": "question one"}]}  # fmt: skip
    first, writes = cache.anthropic(body, now=0)
    again, _ = cache.anthropic(body, now=0.1)  # sent before the first answer is back: a miss too
    assert first.cache_write > 0 and first.cache_read == 0 and again == first
    cache.keep(writes, now=1)
    hit, _ = cache.anthropic({**body, "messages": [{"role": "user", "content": "question two"}]}, now=2)
    assert hit.cache_read == first.cache_write and hit.cache_write == 0 and hit.input > 0
    late, _ = cache.anthropic(body, now=400)  # five minutes after the last read
    assert late.cache_read == 0
    unmarked, _ = cache.anthropic({**body, "tools": tools}, now=3)
    assert unmarked.cache_read == unmarked.cache_write == 0
    with pytest.raises(TooManyBreakpoints):
        cache.anthropic({"tools": [{**t, "cache_control": {"type": "ephemeral"}} for t in tools * 2]}, now=0)
    # OpenAI: automatic, in steps of 128 tokens from the minimum, per route
    chat = {"tools": tools, "messages": [{"role": "user", "content": "q"}]}
    miss, openai_writes = cache.openai("chat", chat, now=0)
    cache.keep(openai_writes, now=1)
    read, _ = cache.openai("chat", {**chat, "messages": [{"role": "user", "content": "another"}]}, now=2)
    assert miss.cache_read == 0 and read.cache_read >= 100 and (read.cache_read - 100) % 128 == 0
    assert read.prompt == read.input + read.cache_read and read.cache_write == 0
    other_key, _ = cache.openai("chat", {**chat, "prompt_cache_key": "elsewhere"}, now=2)
    assert other_key.cache_read == 0  # another key routes to another cache


def test_the_bill_prices_each_kind_of_token_and_the_batch_discount():
    usage = Usage(1_000_000, 100_000, 200_000, 2_000_000)  # uncached, output, written, read
    # claude-sonnet-4: $3 in, $15 out, reads 0.1×, writes 1.25×
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(3 + 1.5 + 0.75 + 0.6)
    assert cost_usd("claude-sonnet-4-5", Usage(0, 0), batched=usage) == pytest.approx((3 + 1.5 + 0.75 + 0.6) / 2)
    assert cost_usd("gpt-4.1", Usage(1_000_000, 0, 0, 1_000_000)) == pytest.approx(2.0 + 0.5)
    assert cost_usd("my-own-model", usage) is None  # tokens only: never a made-up cost
    own = {"input": 1.0, "output": 2.0, "cache_read": None, "cache_write": None}
    assert price_for("x", own) is not None and cost_usd("x", Usage(0, 0, 0, 1_000_000), own) == 1.0
    assert cached_share(usage) == pytest.approx(2 / 3.2) and cached_share(Usage(0, 0)) is None
    assert (usage + usage).prompt_tokens == 2 * usage.prompt_tokens


def test_the_bill_in_one_line():
    def run(cost, calls=10, **tokens):
        counts = {"input_tokens": 100, "output_tokens": 20, **tokens}
        return RUN.model_copy(update={"cache_mode": "use", "api_calls": calls, "cost_usd": cost, **counts})

    head, base = run(0.05, prompt_cache_read_tokens=400), run(0.0123, prompt_cache_read_tokens=100)
    assert bill([head], [base]) == "cost $0.06: head $0.05, base $0.01; 71% of input tokens from the prompt cache"
    assert bill([run(0.004)]) == "cost $0.004"  # under a cent: two significant digits; no cache read: no share
    assert bill([run(None, prompt_cache_read_tokens=900)]) == (
        "tokens 1,000 in, 20 out (no price known for this model); 90% of input tokens from the prompt cache"
    )
    assert bill([run(0.0, calls=0)], [run(0.0, calls=0)]) == "cost $0: every answer came from the answer cache"
    assert bill([RUN]) is None  # a local provider: no bill


def test_the_bill_says_what_went_at_the_batch_price():
    from toolselect.report.schema import BatchOut

    def run(answered, late):
        batch = BatchOut(batches=["b1"], requests=answered + late, answered=answered, failed=0, late=late, waited_s=3)
        counts = {"cache_mode": "use", "api_calls": answered + late, "cost_usd": 0.02, "batch": batch}
        return RUN.model_copy(update={"input_tokens": 100, "output_tokens": 20, **counts})

    assert bill([run(540, 0)]) == "cost $0.02; 540 requests batched at half price"
    assert bill([run(1, 12)], [run(0, 0)]) == (
        "cost $0.04: head $0.02, base $0.02; 1 request batched at half price (12 asked one by one: see the warnings)"
    )


def test_spend_keeps_the_batched_tokens_apart():
    from toolselect.providers import Spend

    spend = Spend()
    spend.add(Usage(100, 10, 5, 50))
    spend.add(Usage(200, 20, 0, 80), batched=True)
    assert (spend.input_tokens, spend.prompt_cache_read_tokens) == (300, 130)
    assert spend.synchronous() == Usage(100, 10, 5, 50) and spend.batched == Usage(200, 20, 0, 80)


def test_a_batch_output_line_is_read_as_the_api_documents_it_and_nothing_else_is_trusted(tmp_path):
    import json

    _, s = settings(tmp_path, Overrides({"provider": "openai", "model": "gpt-4.1"}))
    provider = ChatProvider(s.call, Throttle(1), {})
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    body = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129,
                  "prompt_tokens_details": {"cached_tokens": 100}},
    }  # fmt: skip

    def line(**fields):
        return json.dumps({"id": "batch_req_1", "custom_id": "r0", **fields})

    rid, pick = provider._result(line(response={"status_code": 200, "request_id": "q", "body": body}, error=None))
    assert rid == "r0" and not isinstance(pick, str)
    assert (pick.tool, pick.args, pick.usage) == ("get_weather", {"city": "Oslo"}, Usage(20, 9, 0, 100))
    failed = provider._result(
        line(response={"status_code": 400, "body": {"error": {"message": "bad tool", "code": "x"}}}, error=None)
    )
    assert failed == ("r0", "400 x: bad tool")
    assert provider._result(line(response=None, error={"code": "batch_expired", "message": "late"})) is None
    assert provider._result(line(response=None, error={"code": "server_error", "message": "boom"})) == (
        "r0",
        "server_error: boom",
    )
    assert provider._result("not json") is None and provider._result('{"custom_id": 7}') is None
    assert provider._result(line(response={"status_code": 200, "body": "<html>"}, error=None)) == (
        "r0",
        "the batch's answer has no body",
    )
