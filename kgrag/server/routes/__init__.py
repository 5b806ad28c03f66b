"""The routes of the HTTP API, one router per area; :mod:`kgrag.server.app` includes them."""

#: Each router is imported from its module by kgrag.server.app.
__all__: list[str] = []
