"""The kgrag command line: parse, build objects, call the library, turn KgragError into exit
codes (the ``exit_code`` of each class in kgrag/errors.py, listed in EXIT_CODES_EPILOG and
README). Errors print as one line (no traceback unless --debug).

This module builds the app from the command modules beside it; ``kgrag --help`` lists the
commands in the order they are registered here, then the groups."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from kgrag.cli.ask import ask, audit, trace
from kgrag.cli.auth import auth_app
from kgrag.cli.common import App, QuietOpt, err, state
from kgrag.cli.db import db_app, delete
from kgrag.cli.demo import demo
from kgrag.cli.evaluate import eval_app
from kgrag.cli.ingest import ingest
from kgrag.cli.retention import flag, forget, traces_app
from kgrag.cli.serve import mcp, serve
from kgrag.config import Settings
from kgrag.errors import ConfigError, KgragError

EXIT_CODES_EPILOG = (
    "Exit codes: 0 ok, 1 unexpected error, 2 usage error or some inputs failed, 3 configuration, "
    "4 store, 5 model, 6 plan, 7 execution, 8 not found, 130 interrupted."
)
app = App(
    add_completion=False,
    no_args_is_help=True,
    help="kgrag: a graph-database-backed multimodal knowledge agent.",
    epilog=EXIT_CODES_EPILOG,
)
for command in (ingest, ask, trace, audit, flag, serve, mcp, delete, demo, forget):
    app.command()(command)
app.add_typer(db_app, name="db")
app.add_typer(eval_app, name="eval")
app.add_typer(auth_app, name="auth")
app.add_typer(traces_app, name="traces")
#: Loggers that repeat what kgrag's own one-line error says: each retry, and the Neo4j driver's
#: ERROR records for every failed routing attempt before it raises (shown with --debug).
_NOISY_LOGGERS = ("neo4j", "kgrag.graph.retry")


def _check_metrics_file(value: Path | None) -> Path | None:
    """``--metrics-file``: a usage error (exit 2, naming the option) before the command runs
    when the file cannot be written (a folder, below a file, no write permission)."""
    if value is None:
        return None
    from kgrag.metrics import check_textfile

    try:
        return check_textfile(value)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--metrics-file'") from None


@app.callback()
def _main(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="show tracebacks and debug logs")] = False,
    quiet: QuietOpt = False,
    metrics_file: Annotated[
        Path | None,
        typer.Option(
            "--metrics-file",
            callback=_check_metrics_file,
            help="when the command ends, write its metrics there in the Prometheus text format "
            "(for node-exporter's textfile collector: a batch job's figures)",
        ),
    ] = None,
) -> None:
    state["debug"], state["quiet"] = debug, quiet
    if metrics_file is not None:  # when the command ends, failed or not
        from kgrag.metrics import write_textfile

        ctx.call_on_close(lambda: write_textfile(metrics_file))
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if debug:  # main() quiets them by default
        for name in _NOISY_LOGGERS:
            logging.getLogger(name).setLevel(logging.NOTSET)


def _usage_error_classes() -> tuple[type[Exception], ...]:
    """The ClickException classes typer may raise: typer >= 0.23 bundles its own copy of click
    (``typer._click``), older versions raise the real click's."""
    classes: list[type[Exception]] = []
    try:
        from typer._click.exceptions import ClickException as TyperClickException

        classes.append(TyperClickException)
    except ImportError:  # an older typer that uses click itself
        pass
    try:
        from click.exceptions import ClickException

        classes.append(ClickException)
    except ImportError:
        pass
    return tuple(classes)


def _print_error(message: str) -> None:
    """One line on stderr, whatever the message holds (newlines, brackets)."""
    err.print(f"[red]error:[/red] {escape(' '.join(message.split()))}", highlight=False)


def main() -> None:
    # --debug (the app callback) lets them through again. CRITICAL, not ERROR: the Neo4j driver
    # logs "Unable to retrieve routing information" as an ERROR on every connection attempt.
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        # without standalone mode click returns a typer.Exit's code instead of exiting with it
        # (typer turns Ctrl-C into Exit(130)); everything else is raised to here
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except KgragError as e:
        if state["debug"]:
            raise
        _print_error(str(e))
        sys.exit(e.exit_code)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        sys.exit(130)
    except Exception as e:
        usage_errors = _usage_error_classes()
        if isinstance(e, usage_errors):
            # NoArgsIsHelpError: typer has already printed the help
            if type(e).__name__ != "NoArgsIsHelpError":
                e.show()  # type: ignore[attr-defined]
            sys.exit(getattr(e, "exit_code", 2))
        if state["debug"]:
            raise
        settings_problem = _settings_problem(e)
        if settings_problem:
            _print_error(settings_problem)
            sys.exit(ConfigError.exit_code)
        _print_error(f"{type(e).__name__}: {e} (run with --debug for details)")
        sys.exit(1)


def _settings_problem(e: Exception) -> str | None:
    """A bad ``KGRAG_*`` value as one line naming the variable, or ``None`` for other errors."""
    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    if isinstance(e, SettingsError):  # a JSON setting (a list, a table) that does not parse
        field = re.search(r'field "(\w+)"', str(e))
        if field is None:
            return None
        cause = f": {e.__cause__}" if e.__cause__ is not None else ""
        return (
            f"invalid configuration: KGRAG_{field.group(1).upper()} is not valid JSON{cause} "
            "(unset it, or give a JSON list)"
        )
    if not isinstance(e, ValidationError) or e.title != Settings.__name__:
        return None
    problems = []
    for problem in e.errors():
        variable, *inside = (str(part) for part in problem["loc"])
        where = f" (at {'.'.join(inside)})" if inside else ""  # inside a JSON value
        problems.append(
            f"KGRAG_{variable.upper()}{where}={problem.get('input')!r}: {problem['msg']}"
        )
    return "invalid configuration: " + "; ".join(problems)
