"""The HTTP API (FastAPI): ``kgrag serve`` or :func:`serve`."""

from __future__ import annotations

import logging
import os

from kgrag.config import Settings
from kgrag.errors import ConfigError, DependencyMissingError, UnsafeBindError

log = logging.getLogger(__name__)


def check_serve(settings: Settings, host: str) -> None:
    """Refuse to serve what would be open to others: the removed shared token still set
    (:class:`ConfigError`), or a non-loopback ``host`` without authentication configured
    (:class:`UnsafeBindError`)."""
    from kgrag.auth.authenticator import Authenticator
    from kgrag.server.browser import is_loopback

    if os.environ.get("KGRAG_API_TOKEN"):
        raise ConfigError(
            "KGRAG_API_TOKEN is no longer supported: unset it and give each client its own key "
            "with `kgrag auth add-key --user NAME --role reader` (KGRAG_API_KEYS_FILE), or "
            "configure JWTs (KGRAG_JWT_PUBLIC_KEY_FILE or KGRAG_JWT_JWKS_FILE)"
        )
    if Authenticator.from_settings(settings) is None and not is_loopback(host):
        raise UnsafeBindError(
            f"refusing to serve on {host} without authentication: anyone who reaches it would "
            "act as the local principal. Bind 127.0.0.1, or configure API keys "
            "(`kgrag auth add-key`, KGRAG_API_KEYS_FILE) or JWTs (KGRAG_JWT_*)"
        )


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Run the API with uvicorn until stopped; SIGTERM drains it first
    (:mod:`kgrag.server.lifecycle`)."""
    try:
        import uvicorn
    except ImportError as e:
        raise DependencyMissingError("uvicorn", "server") from e
    from kgrag.server.app import create_app

    check_serve(settings, host)
    wildcard = ("0.0.0.0", "::")  # noqa: S104 (compared with, not bound)
    if host.strip("[]") in wildcard and not settings.allowed_hosts:
        log.warning(
            "listening on every address, but requests are answered only for the Host names "
            "localhost, 127.0.0.1 and ::1: set KGRAG_ALLOWED_HOSTS to the names clients use"
        )
    if not settings.ingest_roots:
        log.warning("no ingest roots: POST /ingest is refused (kgrag serve --ingest-root DIR)")
    from kgrag.server.lifecycle import DrainingServer

    app = create_app(settings, host=host)
    if settings.log_format == "json":
        # every record, uvicorn's included, as one JSON object a line; the access lines are
        # kgrag's own (kgrag.server.observability: request id, route, status, latency, ids)
        from kgrag.logs import configure

        configure("json", logging.INFO)
        config = uvicorn.Config(app, host=host, port=port, log_config=None, access_log=False)
    else:
        config = uvicorn.Config(app, host=host, port=port, log_level="info")
    # SIGTERM drains first (kgrag.server.lifecycle); what is left after the drain gets as long
    config.timeout_graceful_shutdown = max(1, round(settings.shutdown_timeout_s))
    DrainingServer(config, app, settings.shutdown_timeout_s).run()


__all__ = ["check_serve", "serve"]
