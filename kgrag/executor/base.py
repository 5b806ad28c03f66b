"""The types the executor and its handlers share: what a step produced (:class:`StepOutcome`),
what it runs with (:class:`ExecutionEnv`), how it reads the store (:class:`StepReader`), and the
typed table of handlers (:class:`HandlerTable`, filled with one :class:`Registration` per step
class). Handler modules import this module; none of them imports another, nor the executor."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from kgrag.cancel import CancelToken
from kgrag.core import AccessContext, Hit
from kgrag.executor.attachments import AttachmentInputs
from kgrag.executor.metadata_rerank import RuleBook
from kgrag.graph.store import GraphStore
from kgrag.modalities.base import ImageEmbedder, TextEmbedder
from kgrag.planner.models import Step, StepBase

__all__ = [
    "ExecutionEnv",
    "Handler",
    "HandlerTable",
    "Registration",
    "StatementReader",
    "StepOutcome",
    "StepReader",
]


@dataclass(frozen=True)
class HitGroup:
    """The hits a step found for one of the things it looked for: a comparison's side
    (``label``, as the question names it) and the ids of its hits, best first."""

    label: str
    hit_ids: tuple[str, ...]


@dataclass
class StepOutcome:
    """What a step produced; conditions read ``result``, ``status`` and ``count``."""

    status: str  # ok | skipped | error
    result: list[Hit] = field(default_factory=list)
    error: str | None = None
    statements: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    duration_ms: float = 0.0
    query: str | None = None
    """The text a text vector search searched for (multi_hop re-queries with it)."""
    details: dict[str, Any] = field(default_factory=dict)
    """What a handler wants in the trace beyond its hits (rerank factors, matched metadata)."""
    groups: tuple[HitGroup, ...] = ()
    """The hits grouped by what the step looked for (a comparison's sides), when it says."""

    @property
    def count(self) -> int:
        return len(self.result)


@dataclass
class ExecutionEnv:
    store: GraphStore
    text_embedder: TextEmbedder
    access: AccessContext
    image_embedder: Callable[[], ImageEmbedder] | None = None
    tools: Mapping[str, Callable[[dict[str, Any]], list[Hit]]] = field(default_factory=dict)
    llm: Callable[[str, Sequence[Hit], int], str] | None = None
    rerank_rules: RuleBook | None = None  # metadata-aware rerank rule sets (Settings.rerank_rules)
    attachments: AttachmentInputs | None = None  # files attached to the question
    name_seeds: bool = False  # bridge retrieval takes name seeds (Settings.name_seeds)


class StatementReader(Protocol):
    """Runs a named read statement (kgrag/graph/cypher) with its parameters."""

    def read(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]: ...


class StepReader(StatementReader, Protocol):
    """What a handler works through: the run's environment, the outcome it fills in (details,
    query) and the step's cancel token; every read carries the caller's principals and is
    recorded for the trace."""

    env: ExecutionEnv
    outcome: StepOutcome
    cancel: CancelToken | None


S = TypeVar("S", bound=StepBase)

#: A handler of steps of class ``S``: the step, the outcomes of the steps it depends on, the
#: reader; it returns the step's hits.
Handler = Callable[[S, Mapping[int, StepOutcome], StepReader], list[Hit]]


@dataclass(frozen=True)
class Registration(Generic[S]):
    """``handler`` runs the steps of class ``step``; the type checker holds the two to the same
    step class."""

    step: type[S]
    handler: Handler[S]


class HandlerTable:
    """Step class -> its handler; each step class is registered once."""

    def __init__(self, registrations: Iterable[Registration[Any]]) -> None:
        self._by_class: dict[type[StepBase], Handler[Any]] = {}
        for r in registrations:
            if r.step in self._by_class:
                raise ValueError(f"two handlers for {r.step.__name__}")
            self._by_class[r.step] = r.handler

    def run(self, step: Step, inputs: Mapping[int, StepOutcome], reader: StepReader) -> list[Hit]:
        return self._by_class[type(step)](step, inputs, reader)
