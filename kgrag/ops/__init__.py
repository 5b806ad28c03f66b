"""Running kgrag as a service: optional integrations with operators' tools."""
