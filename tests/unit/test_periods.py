"""The period a metadata question names, as the date range of its search (kgrag.planner.periods)."""

from __future__ import annotations

from datetime import date

import pytest

from kgrag.planner.periods import Period, named_period

#: A Friday.
TODAY = date(2026, 11, 27)


@pytest.mark.parametrize(
    ("question", "date_from", "date_to"),
    [
        ("documents added in March 2025", "2025-03", "2025-03"),
        ("which pdfs are from Sept. 2024?", "2024-09", "2024-09"),
        ("files dated 2024-02", "2024-02", "2024-02"),
        ("reports from 2021 to 2023", "2021", "2023"),
        ("what was ingested today?", "2026-11-27", "2026-11-27"),
        ("what was ingested yesterday?", "2026-11-26", "2026-11-26"),
        # a week starts on Monday
        ("files uploaded this week", "2026-11-23", "2026-11-27"),
        ("what came in last week", "2026-11-16", "2026-11-22"),
        ("what files were added last month?", "2026-10", "2026-10"),
        ("documents of this month", "2026-11", "2026-11"),
        ("pictures from last year", "2025", "2025"),
        ("pdfs added in the last 10 days", "2026-11-17", "2026-11-27"),
        ("recordings from the past two weeks", "2026-11-13", "2026-11-27"),
        # a month alone: its latest occurrence begun by today
        ("which items were ingested in february?", "2026-02", "2026-02"),
        ("notes from december", "2025-12", "2025-12"),
        # open ranges
        ("documents from before 2010", None, "2009"),
        ("html pages added since 2020.", "2020", None),
        ("files from 2021 onwards", "2021", None),
        ("pdfs added after March 2025", "2025-04", None),
        ("anything older than December 2024", None, "2024-11"),
        ("reports from 2021", "2021", "2021"),
        ("what was uploaded since september?", "2026-09", None),
    ],
)
def test_named_periods(question: str, date_from: str | None, date_to: str | None) -> None:
    assert named_period(question, TODAY) == Period(date_from=date_from, date_to=date_to)


@pytest.mark.parametrize(
    "question",
    [
        "which pdfs do you have?",
        "what may be stored about the pump?",
        "documents in may be listed",
        "the latest documents",
        "files about the March hare",
    ],
)
def test_no_period(question: str) -> None:
    assert named_period(question, TODAY) is None


def test_last_month_in_january_is_last_years_december() -> None:
    assert named_period("added last month", date(2027, 1, 5)) == Period(
        date_from="2026-12", date_to="2026-12"
    )
