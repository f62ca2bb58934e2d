"""Several models in one run, the pure parts: how models are named (config, flags, input), each
model's gate, the report file of several models (written, read back, refused when tampered), the
verdict over all of them, and portability (what moved in opposite directions for two models)."""

from __future__ import annotations

import json

import pytest

from tests.builders import settings, weather_report
from toolselect.config import Overrides
from toolselect.errors import ConfigError
from toolselect.options import option, pair_models, read_flags, read_inputs
from toolselect.outcome import compare_saved, exit_code
from toolselect.report.files import read_report, read_reports, write_reports

MODELS = """
tools_file: tools.json
evals:
  min_accuracy: 0.8
  max_drop: 5
  models:
    - {provider: anthropic, model: claude-haiku-4-5}
    - {provider: openai, model: gpt-4.1-mini, base_url: "http://127.0.0.1:9/v1", params: {top_p: 0.5},
       gate: {min_accuracy: 0.6}}
    - {provider: openai, model: claude-haiku-4-5, label: haiku-via-gateway}
  cases:
    - prompt: hi
      expect_tool: null
"""


def test_models_from_the_config_each_with_its_own_gate(tmp_path):
    _, s = settings(tmp_path, text=MODELS)
    assert [(m.label, m.provider, m.model) for m in s.models] == [
        ("claude-haiku-4-5", "anthropic", "claude-haiku-4-5"),
        ("gpt-4.1-mini", "openai", "gpt-4.1-mini"),
        ("haiku-via-gateway", "openai", "claude-haiku-4-5"),
    ]
    first, second, third = s.each_model()
    assert (first.call.provider, first.call.model, first.call.base_url) == ("anthropic", "claude-haiku-4-5", None)
    assert (second.call.base_url, dict(second.call.params)) == ("http://127.0.0.1:9/v1", {"top_p": 0.5})
    # a model's own gate: its keys over evals:, the rest from evals:
    assert (first.gate.min_accuracy, second.gate.min_accuracy, third.gate.min_accuracy) == (0.8, 0.6, 0.8)
    assert first.gate.max_drop == second.gate.max_drop == 5
    assert all(each.several and each.models == (m,) for each, m in zip(s.each_model(), s.models, strict=True))
    # a flag (or an input) is for every model: it beats a model's own gate
    _, s = settings(tmp_path, Overrides({"min_accuracy": 0.5}), text=MODELS)
    assert {m.gate.min_accuracy for m in s.models} == {0.5}
    # a model (or provider) given as a flag or in the environment is a run of that one model
    _, s = settings(tmp_path, Overrides({"provider": "bm25"}), text=MODELS)
    assert [m.provider for m in s.models] == ["bm25"] and not s.each_model()[0].several
    _, s = settings(tmp_path, env={"TOOLSELECT_PROVIDER": "openai", "TOOLSELECT_MODEL": "gpt-x"}, text=MODELS)
    assert [(m.provider, m.model) for m in s.models] == [("openai", "gpt-x")]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("  min_accuracy: 0.8\n", "  min_accuracy: 0.8\n  provider: anthropic\n"),
         "toolselect.yaml:5: evals.provider and evals.models both name models"),
        (("label: haiku-via-gateway", "label: gpt-4.1-mini"),
         "two models are labelled 'gpt-4.1-mini' (models 2 and 3)"),
        (("label: haiku-via-gateway", "label: 'has space'"), "evals.models[2].label"),
        (("provider: anthropic, model", "provider: antropic, model"), "unknown provider 'antropic' (did you mean"),
        (("{provider: anthropic, model: claude-haiku-4-5}", "{provider: anthropic}"),
         "no model for provider 'anthropic'"),
        (("gate: {min_accuracy: 0.6}", "gate: {min_acuracy: 0.6}"), "min_acuracy"),
        (("gate: {min_accuracy: 0.6}", "gate: {min_accuracy: 6}"), "evals.models[1].gate.min_accuracy"),
    ],
)  # fmt: skip
def test_model_mistakes_are_said_where_they_are(tmp_path, change, message):
    with pytest.raises(ConfigError) as caught:
        settings(tmp_path, text=MODELS.replace(*change))
    assert message in str(caught.value)


def test_two_models_with_one_name_are_told_apart_by_provider(tmp_path):
    text = MODELS.replace("model: claude-haiku-4-5, label: haiku-via-gateway", "model: claude-haiku-4-5")
    _, s = settings(tmp_path, text=text)
    assert [m.label for m in s.models] == ["anthropic:claude-haiku-4-5", "gpt-4.1-mini", "openai:claude-haiku-4-5"]


def test_repeated_flags_pair_models_with_providers():
    def flags(**values):
        return read_flags(dict(values.items()))

    assert flags(provider=["openai"], model=["a"]) == {"provider": "openai", "model": "a"}
    paired = flags(provider=["openai", "anthropic"], model=["a", "b"], base_url=["http://x/v1"])
    assert paired["models"] == (
        {"provider": "openai", "model": "a", "base_url": "http://x/v1"},
        {"provider": "anthropic", "model": "b", "base_url": "http://x/v1"},
    )
    one_for_all = flags(provider=["openai"], model=["a", "b"])
    assert [m["provider"] for m in one_for_all["models"]] == ["openai", "openai"]
    assert [m["provider"] for m in flags(model=["a", "b"])["models"]] == [None, None]  # the config's provider
    with pytest.raises(ConfigError, match="3 --provider flags for 2 --model flags"):
        flags(provider=["openai"] * 3, model=["a", "b"])
    with pytest.raises(ConfigError, match="2 --base-url flags but one --model"):
        pair_models({"base_url": ["u", "v"], "model": "a"})
    with pytest.raises(ConfigError, match="unknown provider 'opneai' in --provider"):
        flags(provider=["opneai", "openai"], model=["a", "b"])


def test_the_models_input():
    given = read_inputs({"INPUT_MODELS": "haiku=anthropic:claude-haiku-4-5\n# a comment\nopenai:gpt-4.1-mini\n"})
    assert given["models"] == (
        {"provider": "anthropic", "model": "claude-haiku-4-5", "label": "haiku"},
        {"provider": "openai", "model": "gpt-4.1-mini", "label": None},
    )
    for bad, said in (
        ("gpt-4.1-mini", r"expected \[label=\]provider:model"),
        ("opneai:gpt-4.1", "unknown provider 'opneai'"),
        ("# only a comment", "no model given"),
    ):
        with pytest.raises(ConfigError, match=said):
            option("models").parse(bad, "input models")


def test_models_from_the_input_resolve_like_the_config(tmp_path):
    over = Overrides({"models": option("models").parse("a=openai:m1\nanthropic:m2", "input models")}, "input")
    _, s = settings(tmp_path, over, text=MODELS)
    assert [(m.label, m.provider, m.model, m.gate.min_accuracy) for m in s.models] == [
        ("a", "openai", "m1", 0.8),
        ("m2", "anthropic", "m2", 0.8),
    ]


GOOD = {"rain tomorrow": "get_forecast", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}
WORSE = {"rain tomorrow": "get_weather", "wind now": "get_weather", "week ahead": "get_forecast", "thanks": None}


def labelled(picks, label):
    r = weather_report(picks)
    return r.model_copy(update={"run": r.run.model_copy(update={"label": label, "model": label})})


def test_a_report_of_several_models_round_trips_and_a_tampered_one_is_refused(tmp_path):
    path = tmp_path / "r.json"
    reports = (labelled(GOOD, "a"), labelled(WORSE, "b"))
    write_reports(reports, path)
    data = json.loads(path.read_text())
    assert data["schema_version"] == 2 and data["passed"] == all(r.passed for r in reports)
    assert read_reports(path) == reports
    with pytest.raises(ConfigError, match="a report of 2 models \\(a, b\\); one was expected"):
        read_report(path)
    write_reports(reports[:1], path)  # one model: the schema-1 report, as before
    assert json.loads(path.read_text())["schema_version"] == 1 and read_reports(path) == reports[:1]

    def refused(mutate, said):
        d = json.loads(json.dumps(data))
        mutate(d)
        path.write_text(json.dumps(d))
        with pytest.raises(ConfigError, match=said):
            read_reports(path)

    refused(lambda d: d.update(passed=not d["passed"]), "passed does not agree with the models' own gates")
    refused(lambda d: d["models"][1]["run"].update(label="a"), "two reports have the label 'a'")
    refused(lambda d: d["models"][1]["run"].pop("label"), r"models\[1\]\.run\.label: missing")
    refused(lambda d: d.update(models=d["models"][:1]), "a list of 2 to 16 reports")
    refused(lambda d: d.update(extra=1), "unknown key 'extra'")
    refused(lambda d: d["models"][0]["metrics"]["accuracy"].update(numerator=99), r"models\[0\]\.")
    refused(lambda d: d["models"][0]["run"].update(label="<img src=x>"), r"models\[0\]\.run\.label")


def test_saved_reports_of_several_models_are_paired_by_label_and_judged_each_by_its_gate():
    base = (labelled(GOOD, "a"), labelled(GOOD, "b"))
    head = (labelled(GOOD, "a"), labelled(WORSE, "b"))
    outcome = compare_saved(base, head, {"max_drop": 5}, base_label="main")
    assert [m.label for m in outcome.models] == ["a", "b"]
    assert outcome.models[0].verdict.passed and not outcome.models[1].verdict.passed
    assert not outcome.verdict.passed and exit_code(outcome) == 1
    assert all(r.startswith("b: ") for r in outcome.verdict.reasons)
    # a base without one of the models: no baseline for that one (or an error, for `diff`)
    partial = compare_saved((*base[:1], labelled(GOOD, "c")), head, {}, base_label="main")
    assert partial.models[1].diff is None
    assert partial.models[1].base_note == "no baseline: the base report has no model labelled 'b'"
    with pytest.raises(ConfigError, match="main has no model labelled 'b'"):
        compare_saved((*base[:1], labelled(GOOD, "c")), head, {}, base_label="main", refuse_incomparable=True)


def test_portability_names_what_moved_in_opposite_directions():
    base = (labelled(GOOD, "a"), labelled(WORSE, "b"))
    head = (labelled(WORSE, "a"), labelled(GOOD, "b"))
    moved = compare_saved(base, head, {}, base_label="main").portability
    assert [(c.name, c.helped, c.hurt) for c in moved.cases] == [
        ("rain tomorrow", (("b", "0% → 100%"),), (("a", "100% → 0%"),))
    ]
    cells = {(c.expected, c.picked): (c.helped, c.hurt) for c in moved.cells}
    assert cells == {
        ("get_forecast", "get_forecast"): ((("b", 1),), (("a", -1),)),
        ("get_forecast", "get_weather"): ((("b", -1),), (("a", 1),)),
    }
    # the same change for both models: nothing to port
    same = compare_saved((*base[:1], labelled(GOOD, "b")), (head[0], labelled(WORSE, "b")), {}, base_label="m")
    assert not same.portability


def test_the_html_report_shows_portability():
    from toolselect.render.html import render_html

    base = (labelled(GOOD, "a"), labelled(WORSE, "b"))
    head = (labelled(WORSE, "a"), labelled(GOOD, "b"))
    page = render_html(compare_saved(base, head, {}, base_label="main"))
    assert "Portability: the change helped one model and hurt another" in page
    assert "<td>rain tomorrow<div class='src'>" in page and "<td>b 0% → 100%</td><td>a 100% → 0%</td>" in page
    assert "wanted <code>get_forecast</code>, got <code>get_weather</code>: less often for b (−1)" in page


def test_labels_are_checked_before_the_run(tmp_path):
    flags = read_flags({"provider": ["openai"], "model": ["x y", "org/" + "m" * 80]})
    _, s = settings(tmp_path, Overrides(flags), text=MODELS)
    assert s.models[0].label == "x-y"
    assert len(s.models[1].label) == 64 and s.models[1].label.startswith("org/mmm")
    with pytest.raises(ConfigError, match="the label 'bad label' can't name a model"):
        settings(
            tmp_path, Overrides({"models": ({"provider": "openai", "model": "a", "label": "bad label"},)}), text=MODELS
        )
    with pytest.raises(ConfigError, match=r"expected \[label=\]provider:model"):
        option("models").parse("fast!=openai:gpt-4.1", "input models")
    many = tuple({"provider": "openai", "model": f"m{i}"} for i in range(17))
    with pytest.raises(ConfigError, match="17 models: a run takes at most 16"):
        settings(tmp_path, Overrides({"models": many}), text=MODELS)


def test_any_models_failed_run_is_an_infrastructure_failure():
    good, broken = labelled(GOOD, "a"), labelled(GOOD, "b")
    broken = broken.model_copy(update={"gate": broken.gate.model_copy(update={"stopped": "401 from the API"})})
    assert exit_code(compare_saved(None, (good, broken), {}, base_label="m")) == 3
    assert exit_code(compare_saved(None, (broken, good), {}, base_label="m")) == 3
