"""Ingestion as background jobs: submit one, poll it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Response
from fastapi import Path as PathParam

from kgrag.auth.principal import Role
from kgrag.errors import NotFoundError
from kgrag.server.deps import AppState, Caller
from kgrag.server.identity import require
from kgrag.server.models import IngestRequest, JobView, Text
from kgrag.server.openapi import errors
from kgrag.server.security import confine_paths

router = APIRouter(tags=["ingest"])


@router.post(
    "/ingest",
    status_code=202,
    response_model=JobView,
    operation_id="ingest",
    responses={
        **errors(400, 403, 413, 422, 429),
        202: {
            "description": "the job, queued",
            "links": {
                "job": {
                    "operationId": "getJob",
                    "parameters": {"job_id": "$response.body#/id"},
                    "description": "poll the job until it is done or failed",
                }
            },
        },
    },
)
def ingest(body: IngestRequest, who: Caller, state: AppState, response: Response) -> JobView:
    """Queue files, folders, globs or manifests on the server's disk (inside the ingest
    roots) for ingestion; returns the job to poll at ``GET /jobs/{id}``. Needs the
    ``writer`` role; a re-ingest that changes a document's ACL needs ``admin`` (that
    file fails in the job's report otherwise)."""
    require(who, Role.WRITER)
    state.drain.check()
    paths = confine_paths(body.paths, body.acl, state.settings.ingest_roots)
    job = state.jobs.submit(paths, body.acl, who)
    response.headers["X-Kgrag-Job-Id"] = job.id  # the access log names the job
    return job


@router.get(
    "/jobs/{job_id}",
    response_model=JobView,
    operation_id="getJob",
    responses=errors(404, 422),
)
def job(
    who: Caller,
    state: AppState,
    job_id: Annotated[Text, PathParam(description="the id POST /ingest gave")],
) -> JobView:
    """A job, to the principal that submitted it or an admin (404 to anyone else)."""
    found = state.jobs.get(job_id)
    if found is not None and not (who.can(Role.ADMIN) or state.jobs.owner(job_id) == who.id):
        found = None
    if found is None:
        raise NotFoundError(f"no ingest job {job_id!r} (jobs are forgotten at restart)")
    return found
