"""Text given as input must be Unicode: the one check of it, for every boundary.

A Python ``str`` can hold a lone surrogate (U+D800 to U+DFFF), which is no Unicode character and
has no UTF-8 form: it is what invalid UTF-8 in a command-line argument becomes (Python decodes
``argv`` with ``surrogateescape``: byte 0xFF is U+DCFF) and what a JSON ``"\\udcff"`` escape
decodes to. Neither store can hold one, and the models refuse it too. So text is refused where
it enters, with what is wrong and where:

- :func:`unicode_problem` says why a string is not Unicode (``None`` when it is);
- :func:`check_text` raises :class:`~kgrag.errors.InvalidTextError` naming the input;
- :func:`shown_text` writes a refused value so that it can be printed (its surrogates escaped);
- :data:`UnicodeText` is the pydantic type of such text (the HTTP request models, manifest
  lines): a lone surrogate is the validation error ``invalid_unicode`` of that field.

A question is held to more (:func:`check_question`): no control character but whitespace (a NUL
cannot be stored by FalkorDB; an escape sequence would be printed back by ``kgrag trace``), and
at least one word (a letter or digit): ``"???"`` or ``""`` asks nothing, and is refused rather
than answered with the nearest sentence. :data:`REFUSE_INVALID_QUESTION` is that check as
pydantic metadata (the validation error ``invalid_question``).

The command line checks every argument in one place too (``kgrag.cli.common.CheckedCommand``).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from kgrag.errors import InvalidTextError

__all__ = [
    "CONTROL_CHARACTER_CLASS",
    "INVALID_QUESTION",
    "INVALID_UNICODE",
    "REFUSE_INVALID_QUESTION",
    "REFUSE_INVALID_QUESTION_CHARACTERS",
    "REFUSE_INVALID_UNICODE",
    "UnicodeText",
    "check_question",
    "check_text",
    "control_problem",
    "has_words",
    "question_problem",
    "shown_text",
    "unicode_problem",
]

#: The pydantic error type of text that is not Unicode.
INVALID_UNICODE = "invalid_unicode"
#: The pydantic error type of a question that cannot be asked (:func:`question_problem`).
INVALID_QUESTION = "invalid_question"

#: Control characters (Unicode category Cc: C0, DEL, C1) other than the ASCII whitespace ones
#: (tab, line feed, vertical tab, form feed, carriage return), which a pasted question may hold.
#: As a regex character class's content (the same in Python, ECMAScript and Rust syntax).
CONTROL_CHARACTER_CLASS = r"\x00-\x08\x0e-\x1f\x7f-\x9f"
_CONTROL = re.compile(f"[{CONTROL_CHARACTER_CLASS}]")
_CONTROL_NAMES = {0x00: "NUL", 0x1B: "ESC", 0x7F: "DEL"}


def unicode_problem(value: str) -> str | None:
    """Why ``value`` is not valid Unicode text (it holds a lone surrogate: which one and where),
    or ``None`` when it is."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(value[e.start])
        byte = f" (the byte 0x{code - 0xDC00:02X} of invalid UTF-8)" if code >= 0xDC80 else ""
        return (
            f"it is not valid Unicode: character {e.start + 1} is the lone surrogate "
            f"U+{code:04X}{byte}"
        )
    return None


def check_text(what: str, value: str) -> str:
    """``value`` when it is valid Unicode, else :class:`~kgrag.errors.InvalidTextError` naming
    ``what`` (e.g. "question", "flag reason") and the lone surrogate."""
    problem = unicode_problem(value)
    if problem is not None:
        raise InvalidTextError(what, problem)
    return value


def control_problem(value: str) -> str | None:
    """Why ``value`` is no text a question may be (it holds a control character other than
    whitespace: which one and where), or ``None`` when it holds none."""
    match = _CONTROL.search(value)
    if match is None:
        return None
    code = ord(match.group(0))
    name = f" ({_CONTROL_NAMES[code]})" if code in _CONTROL_NAMES else ""
    return f"character {match.start() + 1} is the control character U+{code:04X}{name}"


def has_words(value: str) -> bool:
    """Whether ``value`` holds a word: a letter or a digit (of any script)."""
    return any(c.isalnum() for c in value)


def question_problem(value: str, *, words: bool = True) -> str | None:
    """Why ``value`` cannot be asked, or ``None`` when it can: a lone surrogate, a control
    character other than whitespace, or (with ``words``) no word at all: empty, spaces, or
    only punctuation or symbols."""
    problem = unicode_problem(value) or control_problem(value)
    if problem is None and words and not has_words(value):
        what = "it is empty" if not value.strip() else "it has no words, only punctuation"
        problem = f"{what}; ask in words what you want to know"
    return problem


def check_question(value: str, *, words: bool = True) -> str:
    """``value`` when it can be asked (:func:`question_problem`), else
    :class:`~kgrag.errors.InvalidTextError` naming the question and what is wrong."""
    problem = question_problem(value, words=words)
    if problem is not None:
        raise InvalidTextError("question", problem)
    return value


def shown_text(value: str) -> str:
    """``value`` as it can be printed or stored: each lone surrogate written as its escape
    (``\\udcff``). For naming a refused input (a file name of invalid UTF-8) in a message."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _refuse_invalid_unicode(value: object) -> object:
    # before the str validation (and any pattern): pydantic-core's own error for such a string
    # ("unable to parse raw data as a unicode string") says neither which character nor why
    if isinstance(value, str):
        problem = unicode_problem(value)
        if problem is not None:
            raise PydanticCustomError(INVALID_UNICODE, "{problem}", {"problem": problem})
    return value


#: The check as pydantic metadata, for a string type with other constraints: put it last,
#: ``Annotated[str, StringConstraints(...), REFUSE_INVALID_UNICODE]``, so that it runs first and
#: the constraints stay in the JSON schema (after it they would run, but not be shown there).
REFUSE_INVALID_UNICODE = BeforeValidator(_refuse_invalid_unicode)

#: A string that must be valid Unicode (no lone surrogate).
UnicodeText = Annotated[str, REFUSE_INVALID_UNICODE]


def _question_check(*, words: bool) -> BeforeValidator:
    def refuse(value: object) -> object:
        if isinstance(value, str):
            problem = question_problem(value, words=words)
            if problem is not None:
                raise PydanticCustomError(INVALID_QUESTION, "{problem}", {"problem": problem})
        return value

    return BeforeValidator(refuse)


#: The check of a question as pydantic metadata (the error ``invalid_question``); put it before
#: :data:`REFUSE_INVALID_UNICODE`, so that a lone surrogate is ``invalid_unicode`` as elsewhere.
REFUSE_INVALID_QUESTION = _question_check(words=True)
#: The same without the words: the question beside attached files, which ask when it is empty.
REFUSE_INVALID_QUESTION_CHARACTERS = _question_check(words=False)
