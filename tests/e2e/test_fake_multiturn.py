"""The fake model API answers multi-turn tool conversations (by turn, and by the results it was
given) for all three APIs, through the real SDKs: the ground the trajectory cases of issue 13 are
built on."""

from __future__ import annotations

import anthropic
import openai

from tests.fakes.model_api import FakeModelAPI

PROMPT = "What's the forecast for Paris?"
SCRIPT = {
    "answers": {
        PROMPT: [
            {"turn": 0, "tool": "get_forecast", "args": {"city": "Paris"}},
            # the first variant whose conditions hold answers: the most specific first
            {"after": {"get_weather": "sunny"}, "text": "The forecast service is down; right now it is sunny."},
            {"after": {"get_forecast": "error"}, "tool": "get_weather", "args": {"city": "Paris"}},
        ]
    }
}
TOOL = {"type": "object", "properties": {"city": {"type": "string"}}}


def test_anthropic_tool_results_steer_the_next_turn():
    with FakeModelAPI(SCRIPT) as api:
        client = anthropic.Anthropic(base_url=api.url, api_key="k", max_retries=0)
        tools = [{"name": n, "description": n, "input_schema": TOOL} for n in ("get_forecast", "get_weather")]
        messages: list = [{"role": "user", "content": PROMPT}]
        first = client.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
        [use] = [b for b in first.content if b.type == "tool_use"]
        assert use.name == "get_forecast"
        messages += [
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "503", "is_error": True}],
            },
        ]
        second = client.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
        [use2] = [b for b in second.content if b.type == "tool_use"]
        assert use2.name == "get_weather" and api.log[-1]["turn"] == 1
        messages += [
            {"role": "assistant", "content": [b.model_dump() for b in second.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use2.id, "content": "sunny, 21°"}]},
        ]
        third = client.messages.create(model="m", max_tokens=100, tools=tools, messages=messages)
        assert third.stop_reason == "end_turn" and "service is down" in third.content[0].text
        assert [r["tool"] for r in api.log[-1]["results"]] == ["get_forecast", "get_weather"]
        client.close()


def test_openai_chat_and_responses_tool_results_steer_the_next_turn():
    with FakeModelAPI(SCRIPT) as api:
        client = openai.OpenAI(base_url=api.url + "/v1", api_key="k", max_retries=0)
        tools = [
            {"type": "function", "function": {"name": n, "parameters": TOOL}} for n in ("get_forecast", "get_weather")
        ]
        messages: list = [{"role": "user", "content": PROMPT}]
        first = client.chat.completions.create(model="m", messages=messages, tools=tools).choices[0].message
        [call] = first.tool_calls
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [c.model_dump() for c in first.tool_calls]},
            {"role": "tool", "tool_call_id": call.id, "content": "Error: 503 from the forecast service"},
        ]
        second = client.chat.completions.create(model="m", messages=messages, tools=tools).choices[0].message
        assert second.tool_calls[0].function.name == "get_weather" and api.log[-1]["turn"] == 1

        flat = [{"type": "function", "name": n, "parameters": TOOL} for n in ("get_forecast", "get_weather")]
        items: list = [{"role": "user", "content": PROMPT}]
        r1 = client.responses.create(model="m", input=items, tools=flat)
        [fc] = [o for o in r1.output if o.type == "function_call"]
        items += [
            {"type": "function_call", "call_id": fc.call_id, "name": fc.name, "arguments": fc.arguments},
            {"type": "function_call_output", "call_id": fc.call_id, "output": "error: 503"},
        ]
        r2 = client.responses.create(model="m", input=items, tools=flat)
        [fc2] = [o for o in r2.output if o.type == "function_call"]
        items += [
            {"type": "function_call", "call_id": fc2.call_id, "name": fc2.name, "arguments": fc2.arguments},
            {"type": "function_call_output", "call_id": fc2.call_id, "output": "sunny"},
        ]
        r3 = client.responses.create(model="m", input=items, tools=flat)
        assert "service is down" in r3.output_text and api.log[-1]["turn"] == 2
        client.close()
