"""The trace viewer: one self-contained HTML page (inline CSS and script, nothing loaded from
the network) that draws Query, Plan, Steps and their evidence as a graph, with each node's
details on click. The trace is embedded as JSON that cannot close its script element."""

from __future__ import annotations

import json
from html import escape
from importlib import resources
from typing import Any

from kgrag.core import Trace
from kgrag.viewer.layout import layout_trace

_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def embed_json(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``</script>``, no ``<!--``."""
    return json.dumps(value, ensure_ascii=False, default=str).translate(_JSON_ESCAPES)


def _asset(name: str) -> str:
    return resources.files("kgrag.viewer").joinpath(name).read_text(encoding="utf-8")


def render_trace_html(trace: Trace) -> str:
    """The viewer page for ``trace`` (from :func:`kgrag.executor.trace.read_trace`)."""
    layout = layout_trace(trace)
    q = trace.query
    data = {"layout": layout.model_dump(mode="json"), "trace": trace.to_json()}
    legend = "".join(
        f'<span><i style="background:{colour};border:1px solid #7a8699"></i>{name}</span>'
        for name, colour in (
            ("Query", "#dbe9ff"),
            ("Plan", "#e8e0ff"),
            ("Step", "#ffffff"),
            ("Evidence", "#fff4d6"),
            ("Answer", "#dff5e1"),
        )
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
        f"<title>kgrag trace {escape(q.id)}</title>\n"
        f"<style>{_asset('viewer.css')}</style></head>\n<body>\n"
        f"<header><h1>Trace of {escape(q.id)}: {escape(q.text or '')}</h1>"
        f'<div class="meta">exit reason {escape(str(q.exit_reason))} · iterations '
        f"{escape(str(q.iterations))} · latency {escape(str(q.latency_ms))} ms · "
        f'click a node for its details</div><div class="legend">{legend}</div></header>\n'
        '<div id="wrap"><div id="graph"></div><aside id="details"></aside></div>\n'
        f'<script type="application/json" id="kgrag-data">{embed_json(data)}</script>\n'
        f"<script>{_asset('viewer.js')}</script>\n</body></html>\n"
    )
