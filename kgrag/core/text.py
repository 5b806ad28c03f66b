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

The command line checks every argument in one place too (``kgrag.cli.common.CheckedCommand``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from kgrag.errors import InvalidTextError

__all__ = [
    "INVALID_UNICODE",
    "REFUSE_INVALID_UNICODE",
    "UnicodeText",
    "check_text",
    "shown_text",
    "unicode_problem",
]

#: The pydantic error type of text that is not Unicode.
INVALID_UNICODE = "invalid_unicode"


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
