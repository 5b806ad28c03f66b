"""Running kgrag as a service: optional integrations with operators' tools (kgrag.ops.otel,
imported only when switched on)."""

__all__: list[str] = []
