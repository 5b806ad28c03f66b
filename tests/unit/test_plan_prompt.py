"""The LLM planner's prompt describes every step type the executor accepts, with its parameters,
from the one definition of the step types (:data:`kgrag.planner.models.Step`): a step type added
to the plan model reaches the prompt without a second list to keep in step."""

from __future__ import annotations

from typing import get_args

from kgrag.planner.analysis import analyse
from kgrag.planner.llm import plan_messages
from kgrag.planner.models import Step
from kgrag.planner.params import DOCUMENT_STEP_TYPES, STEP_TYPES


def _system() -> str:
    messages = plan_messages(
        "What types of files do you have?", analyse("x"), templates=(), tools={}
    )
    return messages[0].content


def _step_classes() -> list[type]:
    return list(get_args(get_args(Step)[0]))


def test_the_prompt_names_every_step_type_once() -> None:
    system = _system()
    for step_type in sorted(STEP_TYPES):
        assert system.count(f"\n- {step_type}:") == 1, step_type


def test_the_prompt_gives_every_parameter_of_every_step_type() -> None:
    system = _system()
    lines = {line.split(":", 1)[0].removeprefix("- "): line for line in system.splitlines()}
    for cls in _step_classes():
        step_type = get_args(cls.model_fields["type"].annotation)[0]
        params = cls.model_fields["parameters"].annotation
        described = lines[step_type]
        for name in params.model_fields:
            assert f" {name} (" in described, (step_type, name)


def test_the_document_steps_are_described_with_their_purpose() -> None:
    system = _system()
    assert "- document_types: How many readable documents there are of each type" in system
    assert "- document_dates: The stored dates of the readable document" in system
    assert "target (text (1-300 characters), required)" in system


def test_the_prompt_says_the_document_tools_answer_questions_about_documents() -> None:
    assert f"last document step that succeeds ({', '.join(DOCUMENT_STEP_TYPES)})" in _system()
