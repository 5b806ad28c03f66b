"""Request and response bodies of the HTTP API."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from kgrag.acl import AclEntry
from kgrag.agent.answer import Answer
from kgrag.core import Frozen
from kgrag.core.text import (
    CONTROL_CHARACTER_CLASS,
    REFUSE_INVALID_QUESTION,
    REFUSE_INVALID_QUESTION_CHARACTERS,
    REFUSE_INVALID_UNICODE,
)
from kgrag.graph.keys import KEY_EDGE_CHARS, KEY_INNER_CHARS
from kgrag.ingest.pipeline import IngestReport
from kgrag.retention import MAX_FLAG_REASON

#: Text the API takes: no NUL character (neither store can hold one: FalkorDB cannot parse such a
#: parameter). The pattern is the same in Python, ECMAScript and Rust regex syntax. Every string
#: type below refuses a lone surrogate too (a JSON ``"\\udcff"`` escape), as
#: :data:`~kgrag.core.UnicodeText` does: the 422 error ``invalid_unicode`` of its field.
TEXT_PATTERN = r"^[^\x00]*$"
#: An id stored under a unique constraint (kgrag.graph.keys): non-empty, no control characters,
#: no whitespace at either end (the characters ``str.strip`` removes).
KEY_PATTERN = rf"^[^{KEY_EDGE_CHARS}](?:[^{KEY_INNER_CHARS}]*[^{KEY_EDGE_CHARS}])?$"
#: Characters of such an id: 256 are at most 1,024 UTF-8 bytes, the guard's limit.
KEY_MAX_CHARS = 256

#: Comma-separated group names (a form field, a query parameter): no control characters.
GROUPS_PATTERN = rf"^[^{KEY_INNER_CHARS}]*$"
_GROUP = rf"^[^{KEY_EDGE_CHARS},](?:[^{KEY_INNER_CHARS},]*[^{KEY_EDGE_CHARS},])?$"

#: A question: no control character but whitespace, and a word (a letter or digit; ``\w`` is
#: Unicode in Python and Rust, ASCII in ECMAScript): else the 422 error ``invalid_question``.
QUESTION_PATTERN = rf"^[^{CONTROL_CHARACTER_CLASS}]*[^\W_][^{CONTROL_CHARACTER_CLASS}]*$"
#: The question beside attached files: it may have no word (the files ask).
ATTACHED_QUESTION_PATTERN = rf"^[^{CONTROL_CHARACTER_CLASS}]*$"

# REFUSE_INVALID_UNICODE last: it runs first, and the patterns stay in the OpenAPI document
Text = Annotated[str, StringConstraints(pattern=TEXT_PATTERN), REFUSE_INVALID_UNICODE]
Question = Annotated[
    str,
    StringConstraints(pattern=QUESTION_PATTERN),
    REFUSE_INVALID_QUESTION,
    REFUSE_INVALID_UNICODE,
]
#: The question beside attached files: it may be empty (the files ask), else it is a question.
AttachedQuestion = Annotated[
    str,
    StringConstraints(pattern=ATTACHED_QUESTION_PATTERN),
    REFUSE_INVALID_QUESTION_CHARACTERS,
    REFUSE_INVALID_UNICODE,
]
Key = Annotated[
    str,
    StringConstraints(pattern=KEY_PATTERN, max_length=KEY_MAX_CHARS),
    REFUSE_INVALID_UNICODE,
]
#: A user name (as an id) and a group name (an id without a comma), as kgrag.auth checks them.
UserName = Key
GroupName = Annotated[
    str, StringConstraints(pattern=_GROUP, max_length=KEY_MAX_CHARS), REFUSE_INVALID_UNICODE
]
#: Group names separated by commas (a form field, a query parameter).
GroupList = Annotated[str, StringConstraints(pattern=GROUPS_PATTERN), REFUSE_INVALID_UNICODE]
#: Why an answer is flagged.
FlagReason = Annotated[
    str,
    StringConstraints(pattern=TEXT_PATTERN, max_length=MAX_FLAG_REASON),
    REFUSE_INVALID_UNICODE,
]


class IngestRequest(Frozen):
    paths: list[Text] = Field(
        ..., min_length=1, description="files, folders, globs or JSONL manifests on the server"
    )
    acl: list[AclEntry] = Field(
        default_factory=list,
        description="who may read: 'user:NAME', 'group:NAME' or '*' (everyone); public when "
        "empty. A bare name is refused (422)",
    )


class JobView(Frozen):
    """An ingestion job: queued, running, done, failed or interrupted (the server shut down
    before it finished: submit it again to resume it), and its report when done."""

    id: str
    status: Literal["queued", "running", "done", "failed", "interrupted"]
    paths: list[str]
    acl: list[str]
    created_at: str
    started_at: str | None = None
    finished_at: str | None = None
    report: IngestReport | None = None
    error: str | None = None
    attempts: int = Field(
        0,
        description="times the job ran: one more after each loss of the store (at most 3); the "
        "report is the last attempt's (documents stored by earlier attempts count as skipped)",
    )


class AskRequest(Frozen):
    question: Question = Field(..., min_length=1)
    session_id: Key | None = Field(
        None,
        description="conversation id: a non-empty string without surrounding whitespace or "
        f"control characters, at most {KEY_MAX_CHARS} characters (else 422)",
    )
    user: UserName | None = Field(
        None, description="ask as this user (needs the impersonate role; else 403)"
    )
    groups: list[GroupName] = Field(
        default_factory=list,
        description="ask with these groups (needs the impersonate role; else 403)",
    )


class ErrorBody(Frozen):
    """Every error the API answers: a code (``not_found``, ``invalid_request``, ...) and what
    went wrong (a string, or the list of invalid fields of ``invalid_request``)."""

    error: str
    detail: Any = None


class Health(Frozen):
    """``GET /healthz`` when the store answers."""

    status: Literal["ok"]
    version: str
    store_reopens: int = Field(description="times the server reopened its store since it started")
    store_failures: int = Field(
        description="times the store stopped answering since the server started (a Neo4j "
        "driver reconnects by itself: its store is waited for, not reopened)"
    )


class Liveness(Frozen):
    """``GET /livez``: the process answers."""

    status: Literal["alive"]
    version: str


class FlagRequest(Frozen):
    """``POST /queries/{query_id}/flag``: why the answer is flagged (optional)."""

    reason: FlagReason | None = Field(
        None, description=f"why the answer is flagged (at most {MAX_FLAG_REASON:,} characters)"
    )


class FlagView(Frozen):
    """The flag of an answer: while set, trace retention keeps its trace and audit."""

    query_id: str
    flagged: bool
    flagged_at: str | None = Field(None, description="when it was flagged (ISO 8601, UTC)")
    flagged_by: str | None = Field(None, description="the credential id that flagged it")
    reason: str | None = None


class ErasureReport(Frozen):
    """``DELETE /users/{user}/questions``: what was erased."""

    queries: int = Field(description="questions removed with their traces and answers")
    nodes: int = Field(description="trace nodes removed (Query, Plan, Step, Answer)")
    sessions: int = Field(description="sessions removed because no question was left in them")


def answer_json(answer: Answer) -> dict[str, Any]:
    """The answer as ``kgrag ask --json`` prints it."""
    return answer.to_json()
