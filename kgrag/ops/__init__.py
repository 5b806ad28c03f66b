"""Running kgrag as a service: optional integrations with operators' tools."""

#: Import each integration from its module.
__all__: list[str] = []
