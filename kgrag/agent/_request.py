"""One question as the agent's entry points (``ask``, ``stream``, ``aask``, ``astream``,
``search``) receive it: the text, the session, who asks and the files it is about."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgrag.core import AccessContext


@dataclass(frozen=True)
class QuestionRequest:
    """``user``/``groups``/``admin`` filter every read (:attr:`access`); ``asked_by`` is the
    authenticated principal that asked, when it asks as another ``user``; ``attachments`` are
    image or audio files the question is about."""

    question: str
    session_id: str | None = None
    user: str | None = None
    groups: tuple[str, ...] = ()
    admin: bool = False
    asked_by: str | None = None
    attachments: tuple[Path, ...] = ()

    @property
    def access(self) -> AccessContext:
        return AccessContext(user=self.user, groups=self.groups, admin=self.admin)
