"""The HTTP API (FastAPI): ``kgrag serve`` or :func:`serve`."""

from __future__ import annotations

from kgrag.config import Settings
from kgrag.errors import DependencyMissingError


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run the API with uvicorn until interrupted."""
    try:
        import uvicorn
    except ImportError as e:
        raise DependencyMissingError("uvicorn", "server") from e
    from kgrag.server.app import create_app

    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


__all__ = ["serve"]
