"""Trace viewer: one self-contained HTML page drawing a query's reasoning as a graph."""

from kgrag.viewer.html import embed_json, render_trace_html
from kgrag.viewer.layout import TraceLayout, layout_trace

__all__ = ["TraceLayout", "embed_json", "layout_trace", "render_trace_html"]
