"""The Neo4j Browser style sheet (docs/kgrag.grass) gives every node label of the graph model its
own fill colour: Browser draws a node in its label's colour, and tools/browser-check tells what
was drawn by that colour (a Table styled like a Step made the trace's steps unrecognisable)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from kgrag.graph.schema import NODE_LABELS

GRASS = Path(__file__).resolve().parents[2] / "docs" / "kgrag.grass"


def test_every_label_has_a_colour_of_its_own() -> None:
    styles = dict(re.findall(r"node\.([A-Za-z_]\w*)\s*\{([^}]*)\}", GRASS.read_text()))
    by_colour: dict[str, list[str]] = defaultdict(list)
    for label, body in styles.items():
        colour = re.search(r"(?m)^\s*color:\s*(#[0-9A-Fa-f]{6})", body)
        assert colour, f"node.{label} has no color"
        by_colour[colour.group(1).upper()].append(label)
    # bookkeeping nodes share a grey on purpose: no trace shows them as evidence or steps
    evidence_and_trace = NODE_LABELS - {"EmbeddingSpace", "Migration", "IngestJob", "AclChange"}
    shared = {
        c: labels
        for c, labels in by_colour.items()
        if len(labels) > 1 and set(labels) & evidence_and_trace
    }
    assert shared == {}, shared
    assert evidence_and_trace <= set(styles), evidence_and_trace - set(styles)
