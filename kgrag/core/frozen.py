"""The two bases of kgrag's models: :class:`Closed` (refuses unknown fields) and :class:`Frozen`
(that, and immutable). A model that needs more configuration adds it in its own ``model_config``
(pydantic merges it with its base's) and says why beside it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Closed", "Frozen"]


class Closed(BaseModel):
    """A model that refuses unknown fields and may be changed after it is built: a report that
    fills in as a job runs, or the reply an LLM must give (its JSON schema then says
    ``additionalProperties: false``)."""

    model_config = ConfigDict(extra="forbid")


class Frozen(Closed):
    """An immutable model that refuses unknown fields. A subclass adds to the configuration
    (``model_config = ConfigDict(populate_by_name=True)``); pydantic merges it with this one."""

    model_config = ConfigDict(frozen=True)
