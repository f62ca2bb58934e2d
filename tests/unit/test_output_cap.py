"""The answer's cap, in each API's own field: OpenAI's endpoint refuses the old one for reasoning models;
compatible servers (llama.cpp, vLLM, Ollama) read only the old one."""

from __future__ import annotations

from dataclasses import replace

from toolselect.providers import Request
from toolselect.providers.call import ModelCall
from toolselect.providers.openai import make_chat, make_responses
from toolselect.throttle import Throttle

REQUEST = Request("weather in Paris?", None, ())


def test_each_api_gets_the_cap_in_its_own_field():
    call = ModelCall("openai", "m", max_tokens=300)
    throttle = Throttle(1)
    openai = make_chat(replace(call, base_url="https://api.openai.com/v1"), throttle, {}).body(REQUEST)
    local = make_chat(replace(call, base_url="http://127.0.0.1:8080/v1"), throttle, {}).body(REQUEST)
    responses = make_responses(replace(call, base_url="https://api.openai.com/v1"), throttle, {}).body(REQUEST)
    assert openai["max_completion_tokens"] == 300 and "max_tokens" not in openai
    assert local["max_tokens"] == 300 and "max_completion_tokens" not in local
    assert responses["max_output_tokens"] == 300
