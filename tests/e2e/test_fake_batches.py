"""The fake model API's batch endpoints, through the real SDKs, answer as the two batch APIs document:
the SDKs parse every object into their own types, a request is answered as the synchronous route
answers it (its usage too), a failed request is that request's error, a request never run is expired
(or canceled once the batch is cancelled), and a malformed OpenAI batch fails as a whole."""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import openai
import pytest

from tests.fakes.model_api import FakeModelAPI

TOOLS = [{"name": "get_weather", "description": "Current weather for a city.", "input_schema": {"type": "object"}}]
SCRIPT = {
    "answers": {"weather in Paris?": {"tool": "get_weather", "args": {"city": "Paris"}}},
    "faults": [{"match": "broken prompt", "status": 500, "message": "injected fault"}],
}


@pytest.fixture
def clients() -> Any:
    """Makes SDK clients and closes them after the test (an unclosed pool's sockets warn later, in
    whichever test the garbage collector happens to run)."""
    made: list[Any] = []

    def make(kind: Any, **kwargs: Any) -> Any:
        made.append(kind(max_retries=0, **kwargs))
        return made[-1]

    yield make
    for client in made:
        client.close()


def _params(prompt: str) -> Any:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": prompt}],
        "tools": TOOLS,
    }


def test_anthropic_message_batches_through_the_sdk(clients: Any) -> None:
    with FakeModelAPI(SCRIPT, batch={"polls": 2}) as api:
        client = clients(anthropic.Anthropic, api_key="k", base_url=api.url)
        prompts = ["weather in Paris?", "broken prompt"]
        batch = client.messages.batches.create(
            requests=[{"custom_id": f"r{i}", "params": _params(p)} for i, p in enumerate(prompts)]
        )
        assert batch.processing_status == "in_progress" and batch.request_counts.processing == 2
        assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
        ended = client.messages.batches.retrieve(batch.id)
        assert ended.processing_status == "ended"
        assert (ended.request_counts.succeeded, ended.request_counts.errored) == (1, 1)
        results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
        assert results["r0"].type == "succeeded"
        use = next(b for b in results["r0"].message.content if b.type == "tool_use")
        assert (use.name, use.input) == ("get_weather", {"city": "Paris"})
        assert results["r0"].message.usage.input_tokens > 0
        assert results["r1"].type == "errored" and results["r1"].error.error.message == "injected fault"
        assert [e["batch"] for e in api.log] == [True, True]


def test_anthropic_cancelled_batch_ends_with_the_rest_canceled(clients: Any) -> None:
    with FakeModelAPI(SCRIPT, batch={"never_ends": True, "process": 1}) as api:
        client = clients(anthropic.Anthropic, api_key="k", base_url=api.url)
        batch = client.messages.batches.create(
            requests=[{"custom_id": f"r{i}", "params": _params("weather in Paris?")} for i in range(3)]
        )
        for _ in range(3):
            assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
        assert client.messages.batches.cancel(batch.id).processing_status == "canceling"
        ended = client.messages.batches.retrieve(batch.id)
        assert ended.processing_status == "ended"
        assert (ended.request_counts.succeeded, ended.request_counts.canceled) == (1, 2)
        kinds = sorted(r.result.type for r in client.messages.batches.results(batch.id))
        assert kinds == ["canceled", "canceled", "succeeded"]


def _lines(prompts: list[str], url: str = "/v1/chat/completions", models: tuple[str, ...] = ("gpt-4.1",)) -> bytes:
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {}}}]
    return "".join(
        json.dumps(
            {
                "custom_id": f"r{i}",
                "method": "POST",
                "url": url,
                "body": {
                    "model": models[i % len(models)],
                    "messages": [{"role": "user", "content": p}],
                    "tools": tools,
                },
            }
        )
        + "\n"
        for i, p in enumerate(prompts)
    ).encode()


def test_openai_batch_api_through_the_sdk_with_an_expired_request(clients: Any) -> None:
    with FakeModelAPI(SCRIPT, batch={"process": 2}) as api:
        client = clients(openai.OpenAI, api_key="k", base_url=f"{api.url}/v1")
        upload = client.files.create(
            file=("requests.jsonl", _lines(["weather in Paris?", "broken prompt", "never run"])), purpose="batch"
        )
        assert (upload.purpose, upload.status) == ("batch", "processed")
        batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
        assert batch.status == "validating"
        done = client.batches.retrieve(batch.id)
        assert done.status == "expired" and done.request_counts is not None
        assert (done.request_counts.total, done.request_counts.completed, done.request_counts.failed) == (3, 1, 2)
        assert done.output_file_id and done.error_file_id
        out = [json.loads(line) for line in client.files.content(done.output_file_id).text.splitlines()]
        assert [o["custom_id"] for o in out] == ["r0"]
        completion = openai.types.chat.ChatCompletion.model_validate(out[0]["response"]["body"])
        call: Any = (completion.choices[0].message.tool_calls or [])[0]
        assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Paris"})
        errors = {
            e["custom_id"]: e for e in map(json.loads, client.files.content(done.error_file_id).text.splitlines())
        }
        assert errors["r1"]["response"]["status_code"] == 500 and errors["r1"]["error"] is None
        assert errors["r2"]["response"] is None and errors["r2"]["error"]["code"] == "batch_expired"


def test_openai_batch_that_mixes_models_fails_as_a_whole(clients: Any) -> None:
    with FakeModelAPI(SCRIPT) as api:
        client = clients(openai.OpenAI, api_key="k", base_url=f"{api.url}/v1")
        upload = client.files.create(
            file=("r.jsonl", _lines(["a", "b"], models=("gpt-4.1", "gpt-4o"))), purpose="batch"
        )
        batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
        assert batch.status == "failed" and batch.errors is not None and batch.errors.data
        assert batch.errors.data[0].code == "mismatched_model"
        assert not api.log  # nothing was run


def test_an_endpoint_without_batches_answers_404_and_a_bad_key_401(clients: Any) -> None:
    with FakeModelAPI(SCRIPT, batch={"missing": True}) as api:
        client = clients(anthropic.Anthropic, api_key="k", base_url=api.url)
        with pytest.raises(anthropic.NotFoundError):
            client.messages.batches.create(requests=[{"custom_id": "r0", "params": _params("x")}])
    with FakeModelAPI(SCRIPT, key="right") as api:
        oai = clients(openai.OpenAI, api_key="wrong", base_url=f"{api.url}/v1")
        with pytest.raises(openai.AuthenticationError):
            oai.batches.retrieve("batch_000001")


@pytest.mark.parametrize("url", ["/v1/chat/completions", "/v1/responses"])
def test_openai_batch_answers_are_the_sdks_own_types(clients: Any, url: str) -> None:
    """Each answer body in the output file validates as the SDK's type for its endpoint (every field
    the type requires is there), as a real batch's would."""
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

    with FakeModelAPI(SCRIPT) as api:
        client = clients(openai.OpenAI, api_key="k", base_url=f"{api.url}/v1")
        if url == "/v1/responses":
            line = {"custom_id": "r0", "method": "POST", "url": url, "body": {"model": "gpt-4.1", "input": "hi",
                    "tools": [{"type": "function", "name": "get_weather", "parameters": {}}]}}  # fmt: skip
            data = (json.dumps(line) + "\n").encode()
        else:
            data = _lines(["weather in Paris?"])
        upload = client.files.create(file=("r.jsonl", data), purpose="batch")
        batch = client.batches.create(input_file_id=upload.id, endpoint=url, completion_window="24h")
        for _ in range(200):  # worked through in the background
            done = client.batches.retrieve(batch.id)
            if done.status != "in_progress":
                break
            time.sleep(0.02)
        assert done.status == "completed" and done.output_file_id
        body = json.loads(client.files.content(done.output_file_id).text.splitlines()[0])["response"]["body"]
    (ChatCompletion if url == "/v1/chat/completions" else Response).model_validate(body)
