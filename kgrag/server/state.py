"""What the app holds while it runs, typed: one :class:`ServerState` on ``app.state.server``,
set at startup (:mod:`kgrag.server.app`) and read by the routes through
:mod:`kgrag.server.deps`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.datastructures import State

from kgrag.auth.principal import Principal, Role
from kgrag.config import Settings
from kgrag.errors import KgragError, StoreUnavailableError
from kgrag.ingest.pipeline import IngestReport
from kgrag.server._jobs import IngestJobs
from kgrag.server.background import RetentionTask
from kgrag.server.drain import Drain
from kgrag.server.recovery import StoreSupervisor
from kgrag.server.security import confine_paths

if TYPE_CHECKING:
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.graph.store import GraphStore

#: How long an ingestion job waits for a store that is being reopened before it fails.
STORE_WAIT_S = 120.0


def job_failure(error: KgragError, attempts: int) -> str:
    """What a failed ingestion job tells its client."""
    if isinstance(error, StoreUnavailableError):
        return (
            f"the graph store stopped answering and was not back in time ({attempts} "
            "attempt(s)); submit the job again once GET /healthz answers: writes are idempotent "
            "and documents an interrupted job left unfinished are rewritten"
        )
    return str(error)


@dataclass(eq=False)
class ServerState:
    """The settings, the agent, the store's supervisor, the ingestion jobs and the drain (is the
    server shutting down) of a running app."""

    settings: Settings
    agent: KnowledgeAgent
    supervisor: StoreSupervisor
    max_queued_jobs: int
    store_wait_s: float = STORE_WAIT_S
    jobs: IngestJobs = field(init=False)
    drain: Drain = field(default_factory=Drain, init=False)
    retention: RetentionTask | None = field(default=None, init=False)
    """The background prune, when Settings.trace_retention_days is set."""
    _job_store: GraphStore | None = field(default=None, init=False)
    """The store the running job uses."""

    def __post_init__(self) -> None:
        self.jobs = IngestJobs(
            self._ingest,
            max_queued=self.max_queued_jobs,
            retry=self._retry_job,
            failure_message=job_failure,
        )

    def start_retention(self) -> None:
        """Start the background prune when the settings ask for one."""
        days = self.settings.trace_retention_days
        if days is not None and self.retention is None:
            self.retention = RetentionTask(
                self.supervisor,
                older_than_days=days,
                keep_last=self.settings.trace_retention_keep_last,
                interval_s=self.settings.trace_retention_interval_s,
                duty=self.settings.trace_prune_duty,
            )

    def _ingest(self, paths: Sequence[str], acl: Sequence[str], by: Principal) -> IngestReport:
        # checked again right before reading: the files may have changed since the request
        confine_paths(paths, acl, self.settings.ingest_roots)
        if not self.supervisor.wait_ready(self.store_wait_s):
            raise StoreUnavailableError("the graph store is being reopened")
        self._job_store = self.agent.store
        # a re-ingest may change a document's ACL only for an admin (issue 14, decision 3)
        # a shutdown stops the job at its next progress event (IngestJobs.interrupt)
        return self.agent.ingest(
            paths,
            acl,
            progress=lambda _event: self.jobs.check_interrupted(),
            actor=by.id,
            may_change_acl=by.can(Role.ADMIN),
        )

    def _retry_job(self, error: KgragError) -> bool:
        """A job that lost the store runs again once the store answers again."""
        if not isinstance(error, StoreUnavailableError):
            return False
        self.supervisor.failed(self._job_store, error)
        return self.supervisor.wait_ready(self.store_wait_s)


def server_state_of(state: State) -> ServerState:
    """The :class:`ServerState` of an app's ``app.state`` (set once the app has started)."""
    found = getattr(state, "server", None)
    if not isinstance(found, ServerState):
        raise RuntimeError("the kgrag app has not started (no ServerState on app.state)")
    return found
