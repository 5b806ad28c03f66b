"""The HTTP API (FastAPI): ``kgrag serve`` or :func:`serve`."""

from __future__ import annotations

import logging

from kgrag.config import Settings
from kgrag.errors import DependencyMissingError

log = logging.getLogger(__name__)


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run the API with uvicorn until interrupted."""
    try:
        import uvicorn
    except ImportError as e:
        raise DependencyMissingError("uvicorn", "server") from e
    from kgrag.server.app import create_app

    if settings.api_token is None and host not in ("127.0.0.1", "localhost", "::1"):
        log.warning(
            "serving on %s without an API token: anyone who reaches it can ask and ingest; "
            "set KGRAG_API_TOKEN",
            host,
        )
    if not settings.ingest_roots:
        log.warning("no ingest roots: POST /ingest is refused (kgrag serve --ingest-root DIR)")
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


__all__ = ["serve"]
