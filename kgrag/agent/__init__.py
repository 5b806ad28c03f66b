"""The agent: planning, execution and synthesis behind one object."""

#: Nothing to import from here directly: the public names are in :mod:`kgrag`.
__all__: list[str] = []
