"""Material for the demo and for tests: procedurally drawn images and their captions."""

#: Nothing to import from here directly: the public names are in :mod:`kgrag`.
__all__: list[str] = []
