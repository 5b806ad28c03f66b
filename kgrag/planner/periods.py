"""The stretch of time a metadata question names, as the date range of a ``metadata_search``.

"documents added in March 2025", "what was ingested yesterday?", "files uploaded this week",
"which items came in in february?", "reports from 2021 to 2023": :func:`named_period` reads the
first period the question names and returns its first and last day, at the precision the
question gives (``2025-03`` for a month, ``2023`` for a year, days for days and weeks). Relative
periods count from ``today`` (a week starts on Monday, ISO 8601; "the last N months" are
N x 30 days); a month named without a year
is its latest occurrence that has begun by ``today``. Nothing here classifies the question: the
intent classifier decides that it is a metadata search, and this only extracts its parameter.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from kgrag.core import Frozen
from kgrag.ingest.entities.wordlists import MONTHS

__all__ = ["Period", "named_period"]


class Period(Frozen):
    """An inclusive date range: ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` at each end; an open end
    is ``None`` ("since 2020", "before 2010")."""

    date_from: str | None
    date_to: str | None


_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_MONTH_YEAR = re.compile(rf"\b({_MONTH_NAMES})\.?,?\s+((?:19|20)\d\d)\b")
_YEAR_MONTH = re.compile(r"\b((?:19|20)\d\d)-(0[1-9]|1[0-2])\b(?!-\d)")
_FULL_MONTH_NAMES = "|".join(name for name, _ in zip(MONTHS, range(12), strict=False))
"""The twelve full names (MONTHS lists them first): a month named alone is written out ("in
february"), and "in mar", "of dec" are seldom months."""
_MONTH_ALONE = re.compile(rf"\b(?:in|during|from|since|of|for)\s+({_FULL_MONTH_NAMES})\b(?!\s+\d)")
_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")
_RELATIVE = re.compile(r"\b(today|yesterday|(?:this|last|past|previous)\s+(week|month|year))\b")
_LAST_N = re.compile(
    r"\b(?:in\s+)?(?:the\s+)?(?:last|past|previous)\s+(\d{1,3}|two|three|four|five|six|seven|"
    r"ten|twelve)\s+(days?|weeks?|months?)\b"
)
_NUMBERS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "ten": 10,
    "twelve": 12,
}
# "May" is a month and a modal verb: alone ("in may") only after a preposition, and never as
# "may be" / "may have".
_NOT_A_MONTH = re.compile(r"\bmay\s+(?:be|have|not|also|only|need|want)\b")


def named_period(text: str, today: date) -> Period | None:
    """The period ``text`` names (see the module docstring), or ``None``."""
    lowered = text.lower()
    if match := _MONTH_YEAR.search(lowered):
        year, month = int(match.group(2)), MONTHS[match.group(1)]
        return _bounded(lowered, match.span(), _month(year, month), _month(year, month))
    if match := _YEAR_MONTH.search(lowered):
        year, month = int(match.group(1)), int(match.group(2))
        return _bounded(lowered, match.span(), _month(year, month), _month(year, month))
    if match := _LAST_N.search(lowered):
        return _last_n(match.group(1), match.group(2), today)
    if match := _RELATIVE.search(lowered):
        return _relative(match.group(1), today)
    years = sorted({int(y) for y in _YEAR.findall(lowered)})
    if len(years) == 1:
        first = _YEAR.search(lowered)
        assert first is not None
        return _bounded(lowered, first.span(), str(years[0]), str(years[0]))
    if years:
        return Period(date_from=str(years[0]), date_to=str(years[-1]))
    match = _MONTH_ALONE.search(lowered)
    if match and not _NOT_A_MONTH.search(lowered, match.start(1)):
        number = MONTHS[match.group(1)]
        named = _month(today.year if number <= today.month else today.year - 1, number)
        return _bounded(lowered, match.span(1), named, named)
    return None


_BEFORE = re.compile(r"\b(?:before|until|till|prior to|earlier than|older than)\s+(?:the\s+)?$")
_AFTER = re.compile(r"\b(?:after|later than|newer than)\s+(?:the\s+)?$")
_SINCE = re.compile(r"\b(?:since|from)\s+(?:the\s+)?$")
_ONWARDS = re.compile(r"^\s*(?:on(?:wards?)?|and (?:later|after))\b")


def _month(year: int, month: int) -> str:
    return f"{year}-{month:02d}"


def _bounded(text: str, span: tuple[int, int], first: str, last: str) -> Period:
    """The period from ``first`` to ``last`` (one year or one month), or the open range that the
    words before it make of it: "before 2010" ends with 2009, "after March 2025" starts with
    April, "since 2020" (or "from 2020 on") starts with 2020."""
    before = text[: span[0]]
    if _BEFORE.search(before):
        return Period(date_from=None, date_to=_step(first, -1))
    if _AFTER.search(before):
        return Period(date_from=_step(last, 1), date_to=None)
    if _SINCE.search(before) and (
        before.rstrip().endswith("since") or _ONWARDS.match(text[span[1] :])
    ):
        return Period(date_from=first, date_to=None)
    return Period(date_from=first, date_to=last)


def _step(when: str, by: int) -> str:
    """The year or month ``by`` units after ``when`` (``YYYY`` or ``YYYY-MM``)."""
    if len(when) == 4:
        return str(int(when) + by)
    year, month = divmod(int(when[:4]) * 12 + int(when[5:7]) - 1 + by, 12)
    return _month(year, month + 1)


def _days(first: date, last: date) -> Period:
    return Period(date_from=first.isoformat(), date_to=last.isoformat())


def _relative(phrase: str, today: date) -> Period:
    words = phrase.split()
    if words[0] == "today":
        return _days(today, today)
    if words[0] == "yesterday":
        return _days(today - timedelta(days=1), today - timedelta(days=1))
    this = words[0] == "this"
    unit = words[-1]
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        if this:
            return _days(monday, today)
        return _days(monday - timedelta(days=7), monday - timedelta(days=1))
    if unit == "month":
        if this:
            month = f"{today.year}-{today.month:02d}"
        else:
            last = today.replace(day=1) - timedelta(days=1)
            month = f"{last.year}-{last.month:02d}"
        return Period(date_from=month, date_to=month)
    year = str(today.year if this else today.year - 1)
    return Period(date_from=year, date_to=year)


def _last_n(count: str, unit: str, today: date) -> Period:
    n = int(count) if count.isdigit() else _NUMBERS[count]
    days = {"day": 1, "week": 7, "month": 30}[unit.removesuffix("s")] * n
    return _days(today - timedelta(days=days), today)
