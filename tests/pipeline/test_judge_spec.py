"""A candidate judge's prompt, checks and calls: the sandbox, the version, the request the real
client sends to a local fake Gemini server, and the offline candidates' faults."""

import io
import json
import re
from typing import Any

import pytest
from PIL import Image

from pipeline import offline_judges
from pipeline.backend import TaskInfo
from pipeline.gemini import GeminiBackend
from pipeline.judge_spec import JudgeSpec, TemplateProblem, check_template, default_template, render
from pipeline.vocabulary import DIMENSIONS
from tests import aio
from tests.fake_gemini import VERDICT, FakeGemini, Reply, first_image, text_reply

TASK = TaskInfo("s5000-0001-Edema", "chest_xray", "Edema", "add")


def jpeg(shade: int) -> bytes:
    out = io.BytesIO()
    Image.new("L", (64, 64), shade).save(out, "JPEG")
    return out.getvalue()


def spec(**change: Any) -> JudgeSpec:
    return JudgeSpec(**{"model": "gemini-2.5-flash", "template": default_template(),
                        "rubric_version": "r1", **change})


def test_the_default_template_renders_as_the_judge_of_record_does() -> None:
    from pipeline import prompts
    mine = render(spec(), "chest_xray", "Edema", "add", "Add edema.").text
    record = prompts.judge("chest_xray", "Edema", "add", "Add edema.").text
    assert mine == record
    check_template(default_template())


def test_the_version_moves_with_every_setting_that_changes_an_answer() -> None:
    versions = {spec().version, spec(template=default_template() + " ").version,
                spec(temperature=0.0).version, spec(thinking_budget=128).version,
                spec(model="gemini-2.5-pro").version, spec(original_first=True).version,
                spec(rubric_version="r2").version}
    assert len(versions) == 7


@pytest.mark.parametrize("template", [
    "{{ ''.__class__.__mro__[1].__subclasses__() }} {{ instruction }}",
    "{{ rubric.__class__.__init__.__globals__ }} {{ instruction }}",
    "{% for x in range(10**9) %}{% endfor %}",
])
def test_a_template_cannot_reach_past_its_data(template: str) -> None:
    with pytest.raises(TemplateProblem):
        check_template(template)


EVERY_LETTER = "{% for a in instruction %}" * 5 + "{% endfor %}" * 5


DOUBLING = ("{% macro f(s, n) %}{% if n %}{{ f(s ~ s, n - 1) }}{% else %}{{ s|length }}"
            "{% endif %}{% endmacro %}{{ f(instruction, 40) }}")
BRANCHING = ("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
             "{{ f(40) }}")


@pytest.mark.parametrize(("template", "said"), [
    ("{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}",
     "more than 1,000,000 characters and elements"),
    ('{{ "x" * 10000 * 1000 }}', "more than 1,000,000 characters and elements"),
    ('{{ "x" * 1000000000 }}', "the number 1,000,000,000 is past what any prompt needs"),
    ("{{ 2 ** 100 }}", "a power above 64"),
    ('{{ "x"|center(900000000) }}', "the number 900,000,000 is past what any prompt needs"),
    ('{{ "x" * 199900 }}', "the rendered prompt is 20"),
    # Filters the budget did not count (the two): refused by their width at add.
    ("{{ instruction|center(300000000) }}", "past what any prompt needs"),
    ("{{ '%0400000000d'|format(1) }}", "a width or count of 400,000,000"),
    ("{{ '%0400000000d' % 1 }}", "a width or count of 400,000,000"),
    ("{{ '{:>400000000}'.format(1) }}", "a width or count of 400,000,000"),
    ("{{ instruction|wordcount|string|center(1) }}{{ ''|pprint }}{{ 'a'|xmlattr }}",
     "the filter 'xmlattr' is not offered"),
    ("{% set ns = namespace(x='') %}", "namespace() is not offered"),
    # A method of the data, and ``+`` and plain output (each sent 100 MB to the worker).
    ("{{ instruction.ljust(10**8) }}", "a width or count of 100,000,000"),
    ("{{ instruction.center(150000).replace(' ', '-----') }}",
     "more than 1,000,000 characters and elements"),
    ("{% set a = instruction.ljust(150000) %}{{ a + a + a + a + a + a + a }}",
     "more than 1,000,000 characters and elements"),
    ("{% for i in range(100000) %}{{ instruction }}{% endfor %}",
     "more than 1,000,000 characters and elements"),
    ("{{ instruction|random }}", "the filter 'random' is not offered"),
    (DOUBLING, "more than 1,000,000 characters and elements"),
    (BRANCHING, "more than 1,000,000 characters and elements"),
    # Branching on the task: cheap for one sample, not for the long instruction.
    ("{% if instruction|length > 500 %}" + EVERY_LETTER + "{% endif %}", "did not render within 2 s"),
    (EVERY_LETTER, "did not render within 2 s"),
])
def test_a_template_that_would_tie_up_the_server_is_refused(template: str, said: str) -> None:
    with pytest.raises(TemplateProblem, match=re.escape(said)):
        check_template(template + default_template())
    # Within the budget, repetition is a template's own business.
    check_template('{{ "-" * 40 }}' + default_template())


def test_a_render_past_its_limits_in_a_job_fails_that_answer_and_the_next_goes_on() -> None:
    """A template that passed the check but branches on a task none of the samples is: its
    render for that task is stopped at the time limit, and the next render works."""
    from pipeline.judge_spec import render

    slow = spec(template='{% if disease == "Cardiomegaly" %}' + EVERY_LETTER + "{% endif %}"
                + default_template())
    check_template(slow.template)
    with pytest.raises(TemplateProblem, match="did not render within 2 s"):
        render(slow, "chest_xray", "Cardiomegaly", "add", "Enlarge the heart " * 20)
    assert "Enlarge the heart" in render(slow, "chest_xray", "Nodule", "add",
                                         "Enlarge the heart").text


def test_a_candidate_call_sends_its_model_settings_and_image_order() -> None:
    def respond(model: str, body: dict[str, Any], n: int) -> Reply:
        return text_reply(json.dumps(VERDICT))

    fake = FakeGemini(respond)
    original, edited = jpeg(40), jpeg(200)
    with fake.serve() as url:
        backend = GeminiBackend("fake-key-7f3a", base_url=url)
        verdict = aio.run(backend.candidate_judge(
            spec(temperature=0.2, thinking_budget=512), TASK, original, edited, "Add edema."))
        aio.run(backend.candidate_judge(spec(original_first=True), TASK, original, edited,
                                        "Add edema."))
    assert verdict.fields == VERDICT and verdict.call.model == "gemini-2.5-flash"
    assert verdict.call.model_version == "gemini-2.5-pro"  # as the API reported it
    (model, _, body), (_, _, swapped) = fake.calls
    assert model == "gemini-2.5-flash"
    config = body["generationConfig"]
    assert config["temperature"] == 0.2
    # The client sends this nested object with its Python names; the API's JSON reader takes
    # a field's proto name and its camel-case name alike.
    thinking = config.get("thinkingConfig") or config["thinking_config"]
    assert {k.replace("_", "").lower(): v for k, v in thinking.items()} == {
        "includethoughts": True, "thinkingbudget": 512}
    assert config["responseMimeType"] == "application/json"
    assert "temperature" not in swapped["generationConfig"]

    def shades(sent: dict[str, Any]) -> list[int]:
        parts = sent["contents"][0]["parts"]
        images = [first_image({"contents": [{"parts": [p]}]}) for p in parts
                  if "inlineData" in p or "inline_data" in p]
        return [Image.open(io.BytesIO(data)).getpixel((5, 5)) for data in images]

    assert [round(s, -1) for s in shades(body)] == [200, 40]  # the edit first, as the paper's
    assert [round(s, -1) for s in shades(swapped)] == [40, 200]
    assert body["contents"][0]["parts"][-1]["text"].count("Add edema.") == 1


def test_offline_candidates_err_as_named_and_the_same_way_every_time() -> None:
    passes = dict.fromkeys(DIMENSIONS, 1.0)
    fails = dict.fromkeys(DIMENSIONS, 0.0)

    def share(bias: str | None, scores: dict[str, float], *, first: bool = False,
              repeat: int = 0) -> float:
        answers = [offline_judges.verdict_fields(
            spec(bias=bias, original_first=first), TaskInfo(f"t{i}", "fundus", "AMD", "add"),
            scores, "Add drusen.", repeat) for i in range(400)]
        return sum(a[d] for a in answers for d in DIMENSIONS) / (400 * len(DIMENSIONS))

    assert share(None, passes) == 1.0 and share(None, fails) == 0.0
    assert 0.5 < share("lenient", fails) < 0.7 and share("lenient", passes) == 1.0
    assert 0.6 < share("strict", passes) < 0.8 and share("strict", fails) == 0.0
    assert share("order_biased", passes) == 1.0
    assert 0.4 < share("order_biased", passes, first=True) < 0.6
    one = offline_judges.verdict_fields(spec(bias="noisy"), TASK, passes, "x", 0)
    again = offline_judges.verdict_fields(spec(bias="noisy"), TASK, passes, "x", 0)
    assert one == again
    differ = [offline_judges.verdict_fields(spec(bias="noisy"), TaskInfo(f"t{i}", "fundus", "AMD",
              "add"), passes, "x", r) for i in range(50) for r in (0, 1)]
    assert any(differ[2 * i] != differ[2 * i + 1] for i in range(50))


@pytest.mark.parametrize("bias, first", [("lenient", False), ("strict", False), ("noisy", False),
                                         ("order_biased", True), ("order_biased", False)])
def test_each_offline_candidate_errs_per_verdict_as_its_docstring_says(bias: str, first: bool
                                                                      ) -> None:
    """Per verdict, not per question: the strict judge fails about three in four fair passes."""
    candidate = spec(bias=bias, original_first=first)
    passes = dict.fromkeys(DIMENSIONS, 1.0)
    one_failed = {**passes, "structure": 0.0}
    tasks = [TaskInfo(f"t{i}", "fundus", "AMD", "add") for i in range(2000)]
    failed = sum(not offline_judges.verdict_fields(candidate, t, passes, "Add drusen.", 0)
                 ["qualified"] for t in tasks) / len(tasks)
    passed = sum(offline_judges.verdict_fields(candidate, t, one_failed, "Add drusen.", 0)
                 ["qualified"] for t in tasks) / len(tasks)
    fails_a_pass, passes_a_fail = offline_judges.verdict_error_rates(candidate)
    assert failed == pytest.approx(fails_a_pass, abs=0.035)
    assert passed == pytest.approx(passes_a_fail, abs=0.035)
    if fails_a_pass:  # the docstring states the same figure
        assert f"{round(fails_a_pass * 100)} %" in (offline_judges.__doc__ or "")
    if passes_a_fail:
        assert f"{round(passes_a_fail * 100)} %" in (offline_judges.__doc__ or "")


def test_a_template_whose_last_output_is_the_instruction_is_kept() -> None:
    """The long sample instruction ended in a space, which the rendered prompt loses."""
    check_template("Answer with " + ", ".join(
        ["compliance", "structure", "realism", "fidelity", "has_disease", "weighted_score",
         "qualified", "reason"]) + ".\nThe instruction was: {{ instruction }}")
