"""What every command module of the CLI shares: the consoles, the run's flags, the common
options and the helpers that open a store or an agent from ``--store``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import PurePath
from typing import Annotated, Any

import typer
import typer.core
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from kgrag.config import Settings
from kgrag.core.text import unicode_problem

# soft_wrap: an error or status line stays one line when stderr is not a terminal (80 columns)
err = Console(stderr=True, soft_wrap=True)
out = Console()


def _texts(value: object) -> Iterator[str]:
    """The text of a parsed argument value: a string, a path, or those of a list or tuple."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, PurePath):
        yield str(value)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _texts(item)


class CheckedCommand(typer.core.TyperCommand):
    """A command whose every argument and option must be valid Unicode text: invalid UTF-8 on
    the command line (which Python turns into lone surrogates) is a usage error naming the
    option (exit 2) before the command runs, so it never reaches a model or the store. The
    one place the command line checks text; every command of kgrag is one (:class:`App`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        if not ctx.resilient_parsing:
            params: list[Any] = self.get_params(ctx)  # typer's own parameter classes
            for param in params:
                for text in _texts(ctx.params.get(param.name or "")):
                    problem = unicode_problem(text)
                    if problem is not None:
                        raise typer.BadParameter(problem, ctx=ctx, param=param)
        return rest


class App(typer.Typer):
    """A group of kgrag commands: each is a :class:`CheckedCommand` unless told otherwise."""

    def command(self, *args: Any, cls: Any = None, **kwargs: Any) -> Any:
        return super().command(*args, cls=cls or CheckedCommand, **kwargs)


StoreOpt = Annotated[
    str | None, typer.Option("--store", help="store URI (default: embedded ./kgrag-data/kg.db)")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object on stdout")]
state: dict[str, bool] = {"debug": False, "quiet": False}


def _set_quiet(value: bool) -> bool:
    # `kgrag -q ask` and `kgrag ask -q` both land here; the group callback resets it per run
    if value:
        state["quiet"] = True
    return value


QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", callback=_set_quiet, help="no progress output")
]


def settings_for(store: str | None) -> Settings:
    return Settings(store=store) if store else Settings()


def open_store(store: str | None, *, run_migrations: bool = True) -> Any:
    from kgrag.graph import open_settings_store

    return open_settings_store(settings_for(store), run_migrations=run_migrations)


def open_agent(store: str | None) -> Any:
    from kgrag.agent.agent import KnowledgeAgent

    return KnowledgeAgent.open(settings_for(store))


def progress_bars(show: bool, *, label_width: int) -> Progress:
    """Progress bars on stderr, one a stage (hidden for ``--json`` and ``--quiet``)."""
    return Progress(
        TextColumn(f"{{task.description:>{label_width}}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not show,
    )


def emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")


def cli_actor() -> str:
    """Who runs a CLI command, as recorded with an ACL change: ``cli:<os user>``."""
    import getpass
    import os

    try:
        return f"cli:{getpass.getuser()}"
    except (OSError, KeyError):  # no user name for this uid (a container)
        return f"cli:uid-{os.getuid()}"
