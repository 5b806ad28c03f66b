"""A layered layout of one trace as a graph: Query, Plan, Steps (by dependency depth), the
evidence they returned, and the Answer that cites it. Positions are computed here so that the
page's script only draws them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from kgrag.core import Frozen, Trace, TraceStep

NodeKind = Literal["query", "plan", "step", "evidence", "answer"]

#: Most evidence items drawn per step (the details panel lists them all).
EVIDENCE_PER_STEP = 5
NODE_W = 168
NODE_H = 48
GAP_X = 28
GAP_Y = 74
MARGIN = 24
SIDE_LANE = 60  # room on the right for the Query -> Answer edge


class ViewNode(Frozen):
    id: str
    kind: NodeKind
    label: str
    caption: str
    status: str | None = None
    layer: int
    x: float = 0.0
    y: float = 0.0
    ref: str | None = None  # step_id for steps, evidence id for evidence


class ViewEdge(Frozen):
    source: str
    target: str
    type: str
    label: str | None = None


class TraceLayout(Frozen):
    nodes: tuple[ViewNode, ...]
    edges: tuple[ViewEdge, ...]
    width: float
    height: float
    node_w: int = NODE_W
    node_h: int = NODE_H


def _short(text: str | None, n: int) -> str:
    t = " ".join((text or "").split())
    return t if len(t) <= n else t[: n - 1] + "…"


def _depths(steps: Sequence[TraceStep]) -> dict[int, int]:
    deps = {s.step_id: list(s.dependencies) for s in steps}
    depth: dict[int, int] = {}

    def visit(sid: int, seen: frozenset[int]) -> int:
        if sid in depth:
            return depth[sid]
        parents = [d for d in deps.get(sid, ()) if d in deps and d not in seen]
        depth[sid] = 1 + max((visit(d, seen | {sid}) for d in parents), default=-1)
        return depth[sid]

    for sid in deps:
        visit(sid, frozenset())
    return depth


def layout_trace(trace: Trace) -> TraceLayout:
    """Nodes and edges of ``trace`` (from ``read_trace``) with positions."""
    q = trace.query
    plan = trace.plan
    steps = list(trace.steps)
    answer = trace.answer
    nodes: dict[str, dict[str, Any]] = {}
    edges: list[ViewEdge] = []

    nodes["query"] = {
        "id": "query",
        "kind": "query",
        "label": "Query",
        "caption": _short(q.text, 24),
        "status": q.exit_reason,
        "layer": 0,
    }
    nodes["plan"] = {
        "id": "plan",
        "kind": "plan",
        "label": f"Plan ({plan.source or '?'})",
        "caption": f"{len(steps)} steps",
        "layer": 1,
    }
    edges.append(ViewEdge(source="query", target="plan", type="PLANNED"))
    depth = _depths(steps)
    step_ids = {s.step_id for s in steps}
    for s in steps:
        sid = s.step_id
        nid = f"step:{sid}"
        nodes[nid] = {
            "id": nid,
            "kind": "step",
            "label": f"{sid}. {s.type}",
            "caption": f"{s.status} · {s.result_count or 0} hits · {s.duration_ms or 0:.0f} ms",
            "status": s.status,
            "layer": 2 + depth.get(sid, 0),
            "ref": str(sid),
        }
        deps = [d for d in s.dependencies if d in step_ids]
        if not deps:
            edges.append(ViewEdge(source="plan", target=nid, type="HAS_STEP"))
        for d in deps:
            edges.append(ViewEdge(source=f"step:{d}", target=nid, type="DEPENDS_ON"))
    evidence_layer = 2 + max(depth.values(), default=0) + 1
    cited = {c.node_id: c for c in answer.citations}
    for s in steps:
        for r in s.returned[:EVIDENCE_PER_STEP]:
            _evidence_node(nodes, r.id, r.kind or "", r.text)
            nodes[f"ev:{r.id}"]["layer"] = evidence_layer
            edges.append(
                ViewEdge(
                    source=f"step:{s.step_id}",
                    target=f"ev:{r.id}",
                    type="RETURNED",
                    label=f"#{r.rank}",
                )
            )
    for node_id, c in cited.items():
        _evidence_node(nodes, node_id, c.label or "", None)
        nodes[f"ev:{node_id}"]["layer"] = evidence_layer
    if answer.text is not None or cited:
        nodes["answer"] = {
            "id": "answer",
            "kind": "answer",
            "label": "Answer",
            "caption": f"{answer.verdict or answer.mode or ''} · {len(cited)} citations",
            "status": answer.verdict,
            "layer": evidence_layer + 1,
        }
        edges.append(ViewEdge(source="query", target="answer", type="ANSWERED_BY"))
        for node_id, c in cited.items():
            edges.append(
                ViewEdge(
                    source="answer",
                    target=f"ev:{node_id}",
                    type="CITES",
                    label=f"[{c.marker}]",
                )
            )
    return _place(nodes, edges)


def _evidence_node(
    nodes: dict[str, dict[str, Any]], node_id: str, kind: str, text: str | None
) -> None:
    nid = f"ev:{node_id}"
    if nid in nodes:
        return
    nodes[nid] = {
        "id": nid,
        "kind": "evidence",
        "label": kind or "Evidence",
        "caption": _short(text, 24) or _short(node_id, 24),
        "layer": 0,
        "ref": node_id,
    }


def _place(nodes: dict[str, dict[str, Any]], edges: list[ViewEdge]) -> TraceLayout:
    layers: dict[int, list[str]] = {}
    for nid, n in nodes.items():
        layers.setdefault(int(n["layer"]), []).append(nid)
    neighbours: dict[str, list[str]] = {nid: [] for nid in nodes}
    for e in edges:
        neighbours[e.source].append(e.target)
        neighbours[e.target].append(e.source)
    order = sorted(layers)
    pos: dict[str, float] = {}
    for layer in order:
        for i, nid in enumerate(layers[layer]):
            pos[nid] = float(i)
    # a few barycentre sweeps, down then up, to shorten edges
    for sweep in range(4):
        for layer in order if sweep % 2 == 0 else reversed(order):
            members = layers[layer]

            def bary(nid: str, members: list[str] = members) -> float:
                near = [pos[m] for m in neighbours[nid] if m not in members]
                return sum(near) / len(near) if near else pos[nid]

            members.sort(key=lambda nid: (bary(nid), pos[nid]))
            for i, nid in enumerate(members):
                pos[nid] = float(i)
    widest = max(len(v) for v in layers.values())
    width = 2 * MARGIN + widest * NODE_W + (widest - 1) * GAP_X + SIDE_LANE
    placed = []
    for row, layer in enumerate(order):
        members = layers[layer]
        span = len(members) * NODE_W + (len(members) - 1) * GAP_X
        left = (width - SIDE_LANE - span) / 2
        for i, nid in enumerate(members):
            placed.append(
                ViewNode(
                    **{
                        **nodes[nid],
                        "layer": row,
                        "x": left + i * (NODE_W + GAP_X),
                        "y": MARGIN + row * (NODE_H + GAP_Y),
                    }
                )
            )
    height = 2 * MARGIN + len(order) * NODE_H + (len(order) - 1) * GAP_Y
    return TraceLayout(nodes=tuple(placed), edges=tuple(edges), width=width, height=height)
