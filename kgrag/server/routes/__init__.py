"""The routes of the HTTP API, one router per area; :mod:`kgrag.server.app` includes them."""

__all__: list[str] = []
