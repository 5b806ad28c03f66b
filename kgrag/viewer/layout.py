"""A layered layout of one trace as a graph: Query, Plan, Steps (by dependency depth), the
evidence they returned, and the Answer that cites it. Positions are computed here so that the
page's script only draws them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from kgrag.core import Frozen

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


def _depths(steps: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    deps = {int(s["step_id"]): [int(d) for d in s.get("dependencies") or ()] for s in steps}
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


def layout_trace(trace: Mapping[str, Any]) -> TraceLayout:
    """Nodes and edges of ``trace`` (the shape of ``read_trace``) with positions."""
    q = trace.get("query") or {}
    plan = trace.get("plan") or {}
    steps = list(trace.get("steps") or ())
    answer = trace.get("answer") or {}
    nodes: dict[str, dict[str, Any]] = {}
    edges: list[ViewEdge] = []

    nodes["query"] = {
        "id": "query",
        "kind": "query",
        "label": "Query",
        "caption": _short(q.get("text"), 24),
        "status": q.get("exit_reason"),
        "layer": 0,
    }
    nodes["plan"] = {
        "id": "plan",
        "kind": "plan",
        "label": f"Plan ({plan.get('source') or '?'})",
        "caption": f"{len(steps)} steps",
        "layer": 1,
    }
    edges.append(ViewEdge(source="query", target="plan", type="PLANNED"))
    depth = _depths(steps)
    step_ids = {int(s["step_id"]) for s in steps}
    for s in steps:
        sid = int(s["step_id"])
        nid = f"step:{sid}"
        nodes[nid] = {
            "id": nid,
            "kind": "step",
            "label": f"{sid}. {s.get('type')}",
            "caption": f"{s.get('status')} · {s.get('result_count') or 0} hits · "
            f"{s.get('duration_ms') or 0:.0f} ms",
            "status": s.get("status"),
            "layer": 2 + depth.get(sid, 0),
            "ref": str(sid),
        }
        deps = [int(d) for d in s.get("dependencies") or () if int(d) in step_ids]
        if not deps:
            edges.append(ViewEdge(source="plan", target=nid, type="HAS_STEP"))
        for d in deps:
            edges.append(ViewEdge(source=f"step:{d}", target=nid, type="DEPENDS_ON"))
    evidence_layer = 2 + max(depth.values(), default=0) + 1
    cited = {str(c["node_id"]): c for c in answer.get("citations") or ()}
    for s in steps:
        for r in list(s.get("returned") or ())[:EVIDENCE_PER_STEP]:
            _evidence_node(nodes, str(r["id"]), str(r.get("kind") or ""), r.get("text"))
            nodes[f"ev:{r['id']}"]["layer"] = evidence_layer
            edges.append(
                ViewEdge(
                    source=f"step:{s['step_id']}",
                    target=f"ev:{r['id']}",
                    type="RETURNED",
                    label=f"#{r.get('rank')}",
                )
            )
    for node_id, c in cited.items():
        _evidence_node(nodes, node_id, str(c.get("label") or ""), None)
        nodes[f"ev:{node_id}"]["layer"] = evidence_layer
    if answer.get("text") is not None or cited:
        nodes["answer"] = {
            "id": "answer",
            "kind": "answer",
            "label": "Answer",
            "caption": f"{answer.get('verdict') or answer.get('mode') or ''} · "
            f"{len(cited)} citations",
            "status": answer.get("verdict"),
            "layer": evidence_layer + 1,
        }
        edges.append(ViewEdge(source="query", target="answer", type="ANSWERED_BY"))
        for node_id, c in cited.items():
            edges.append(
                ViewEdge(
                    source="answer",
                    target=f"ev:{node_id}",
                    type="CITES",
                    label=f"[{c.get('marker')}]",
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
