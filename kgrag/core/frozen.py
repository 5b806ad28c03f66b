"""The one base of kgrag's immutable models."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Frozen"]


class Frozen(BaseModel):
    """An immutable model that refuses unknown fields. A subclass adds to the configuration
    (``model_config = ConfigDict(populate_by_name=True)``); pydantic merges it with this one."""

    model_config = ConfigDict(frozen=True, extra="forbid")
