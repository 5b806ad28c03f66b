"""The ``kgrag`` command line: one module per command group, put together in
:mod:`kgrag.cli.commands`. ``main`` is the ``kgrag`` console script and ``python -m kgrag``."""

from kgrag.cli.commands import app, main

__all__ = ["app", "main"]
