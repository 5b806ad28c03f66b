"""Text that is not Unicode (a lone surrogate: invalid UTF-8 on a command line, a JSON
``"\\udcff"`` escape) is refused where it enters, by one check per boundary: the pydantic type
:data:`kgrag.core.UnicodeText` under every string of the HTTP API, and ``CheckedCommand`` under
every command of the CLI. The integration half (a real store, a real ``kgrag``) is
tests/integration/test_input_unicode.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from fastapi.routing import APIRoute
from pydantic import TypeAdapter, ValidationError

from kgrag.cli import app
from kgrag.cli.common import CheckedCommand
from kgrag.config import Settings
from kgrag.core import UnicodeText, check_text, unicode_problem
from kgrag.errors import InvalidTextError
from kgrag.server._handlers import _plain_routes
from kgrag.server.app import create_app
from kgrag.server.models import AskRequest, FlagRequest, Key, Text

#: What the byte 0xFF of an argument becomes in Python (surrogateescape).
BAD = "a\udcffb"


def test_the_problem_names_the_character_and_the_byte() -> None:
    assert unicode_problem("Ada, 1843 — ✓") is None
    problem = unicode_problem(BAD)
    assert problem is not None
    assert "character 2" in problem and "U+DCFF" in problem and "0xFF" in problem
    # a surrogate outside surrogateescape's range (a JSON escape) has no byte to name
    high = unicode_problem("\ud800")
    assert high is not None and "U+D800" in high and "0x" not in high
    with pytest.raises(InvalidTextError, match=r"invalid flag reason: .*U\+DCFF") as caught:
        check_text("flag reason", BAD)
    assert caught.value.exit_code == 2 and isinstance(caught.value, ValueError)


@pytest.mark.parametrize("annotation", [UnicodeText, Text, Key])
def test_the_type_refuses_a_lone_surrogate_before_any_pattern(annotation: Any) -> None:
    adapter: TypeAdapter[str] = TypeAdapter(annotation)
    assert adapter.validate_python("ok") == "ok"
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python(BAD)
    (error,) = caught.value.errors()
    assert error["type"] == "invalid_unicode", error  # not pydantic-core's "string_unicode"
    assert "U+DCFF" in error["msg"]


def test_request_models_name_the_field() -> None:
    with pytest.raises(ValidationError) as caught:
        AskRequest.model_validate({"question": "ok", "groups": ["team", BAD]})
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [
        (("groups", 1), "invalid_unicode")
    ]
    with pytest.raises(ValidationError) as caught:
        FlagRequest.model_validate({"reason": BAD})
    assert [(e["loc"], e["type"]) for e in caught.value.errors()] == [
        (("reason",), "invalid_unicode")
    ]


def _commands(command: Any, path: str = "kgrag") -> list[tuple[str, Any]]:
    found = []
    for name, sub in getattr(command, "commands", {}).items():
        found.append((f"{path} {name}", sub))
        found += _commands(sub, f"{path} {name}")
    return found


def test_every_command_checks_its_arguments() -> None:
    """A new command cannot forget the check: each is a CheckedCommand (kgrag.cli.common.App)."""
    found = _commands(typer.main.get_command(app))
    commands = [(name, c) for name, c in found if not hasattr(c, "commands")]
    assert len(commands) > 15
    assert [name for name, c in commands if not isinstance(c, CheckedCommand)] == []


def _text_params(dependant: Any) -> Iterator[Any]:
    """The path, query and form parameters of a route and of its dependencies (headers cannot
    carry a surrogate: HTTP decodes them as Latin-1)."""
    yield from dependant.path_params
    yield from dependant.query_params
    yield from dependant.body_params
    for inner in dependant.dependencies:
        yield from _text_params(inner)


def test_every_text_parameter_of_every_route_refuses_a_lone_surrogate() -> None:
    """Query strings and paths are decoded with replacement characters (no surrogate gets
    through them today); the type is the same anyway, so that no route depends on that."""
    checked = []
    for route in _plain_routes(create_app(Settings()).routes):  # included routers too
        if not isinstance(route, APIRoute):
            continue
        for field in _text_params(route.dependant):
            _, errors = field.validate("ok", loc=(field.name,))
            if errors:  # not text: a JSON body (its models are tested above), files
                continue
            _, errors = field.validate(BAD, loc=(field.name,))
            checked.append(f"{route.path} {field.name}")
            assert [e["type"] for e in errors] == ["invalid_unicode"], (route.path, field.name)
    assert len(checked) > 15, checked
