"""``kgrag demo``: the small multimodal corpus, ingested and asked."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgrag.cli.common import out
from kgrag.config import Settings


def demo(
    workdir: Annotated[
        Path, typer.Option("--dir", help="where the demo corpus and store go")
    ] = Path("demo-output"),
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="store URI to run the demo on, e.g. neo4j://127.0.0.1:7687 (credentials from "
            "KGRAG_NEO4J_USER / KGRAG_NEO4J_PASSWORD). It REPLACES what is in that store: "
            "every node is deleted first, without asking. Default: a new embedded store in "
            "DIR/store",
        ),
    ] = None,
) -> None:
    """Make a small multimodal corpus, ingest it, and answer questions with citations."""
    from kgrag.demo.run import run_demo

    settings = None
    if store:
        settings = Settings(store=store, data_dir=workdir / "store")
    run_demo(workdir, console=out, settings=settings)
