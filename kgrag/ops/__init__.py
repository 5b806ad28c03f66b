"""Running kgrag as a service: optional integrations with operators' tools (``kgrag.ops.otel``)."""

__all__: list[str] = []
