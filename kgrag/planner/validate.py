"""Plan validation: the steps must form a DAG the executor can run.

:func:`validate_plan` checks what the models cannot see one step at a time (unique ids, existing
dependencies, no cycles, a step reads only the results of steps it directly depends on, templates
and tools exist, conditions parse) and returns the dependency graph as a
:class:`networkx.DiGraph` (edges go from a dependency to its dependant).
:func:`generations` groups the steps into batches that may run concurrently.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

import networkx as nx

from kgrag.errors import PlanError
from kgrag.planner.conditions import parse_condition
from kgrag.planner.models import MAX_PLAN_STEPS, GraphQueryStep, Plan, Step, ToolCallStep

__all__ = ["generations", "validate_plan"]

logger = logging.getLogger(__name__)


def validate_plan(
    plan: Plan,
    *,
    template_exists: Callable[[str], bool],
    tool_exists: Callable[[str], bool],
    max_steps: int = MAX_PLAN_STEPS,
) -> nx.DiGraph:
    """Check ``plan`` and return its dependency graph.

    Nodes are step ids, each with the attribute ``step`` (the :data:`~kgrag.planner.models.Step`);
    an edge ``a -> b`` means step ``b`` depends on step ``a``.

    Raises :class:`~kgrag.errors.PlanError` (with ``step_id`` set where one step is at fault) for:
    too many steps, a duplicate step id, a self-dependency, a dependency on a missing step, a
    condition outside the whitelist, reading a missing step or one not among the step's direct
    dependencies, an unknown ``graph_query`` template or ``tool_call`` tool, and a cycle.
    """
    steps = plan.plan
    if len(steps) > max_steps:
        raise PlanError(f"the plan has {len(steps)} steps; at most {max_steps} are allowed")

    counts = Counter(step.step_id for step in steps)
    for step_id, count in counts.items():
        if count > 1:
            positions = [str(i) for i, s in enumerate(steps) if s.step_id == step_id]
            raise PlanError(
                f"step id {step_id} is used by {count} steps (plan positions "
                f"{', '.join(positions)}); step ids must be unique",
                step_id,
            )

    ids = set(counts)
    for step in steps:
        _check_step(step, ids, template_exists=template_exists, tool_exists=tool_exists)

    graph: nx.DiGraph = nx.DiGraph()
    for step in steps:
        graph.add_node(step.step_id, step=step)
    for step in steps:
        for dependency in step.dependencies:
            graph.add_edge(dependency, step.step_id)

    if not nx.is_directed_acyclic_graph(graph):
        cycle = _a_cycle(graph)
        path = " -> ".join(str(n) for n in [*cycle, cycle[0]])
        raise PlanError(f"the dependencies form a cycle: {path}", cycle[0])

    logger.debug("plan validated: %d steps, %d edges", graph.number_of_nodes(), graph.size())
    return graph


def generations(graph: nx.DiGraph) -> list[list[int]]:
    """The steps in topological generations: every step of a generation depends only on steps of
    earlier generations, so one generation's steps may run concurrently. Ids sorted within each."""
    return [sorted(generation) for generation in nx.topological_generations(graph)]


def _check_step(
    step: Step,
    ids: set[int],
    *,
    template_exists: Callable[[str], bool],
    tool_exists: Callable[[str], bool],
) -> None:
    sid = step.step_id
    for dependency in step.dependencies:
        if dependency == sid:
            raise PlanError("the step depends on itself", sid)
        if dependency not in ids:
            raise PlanError(f"depends on step {dependency}, which is not in the plan", sid)

    condition_reads: frozenset[int] = frozenset()
    if step.condition is not None:
        # The model checks conditions already; plans built with model_construct() skip that.
        try:
            condition_reads = parse_condition(step.condition).names()
        except PlanError as e:
            raise PlanError(e.reason, sid) from None

    parameter_reads = step.parameters.reads()
    for read in sorted(parameter_reads | condition_reads):
        where = "its parameters" if read in parameter_reads else "its condition"
        if read == sid:
            raise PlanError(f"reads its own result (in {where})", sid)
        if read not in ids:
            raise PlanError(f"reads step {read} (in {where}), which is not in the plan", sid)
        if read not in step.dependencies:
            raise PlanError(
                f"reads step {read} (in {where}) but does not depend on it; "
                f"add {read} to its dependencies",
                sid,
            )

    if isinstance(step, GraphQueryStep) and not template_exists(step.parameters.template):
        raise PlanError(
            f"unknown Cypher template {step.parameters.template!r} "
            f"(no cypher/{step.parameters.template}.cypher)",
            sid,
        )
    if isinstance(step, ToolCallStep) and not tool_exists(step.parameters.tool):
        raise PlanError(f"unknown tool {step.parameters.tool!r}", sid)


def _a_cycle(graph: nx.DiGraph) -> list[int]:
    """One cycle, as its nodes in order, starting from its smallest id (deterministic)."""
    edges = nx.find_cycle(graph, source=sorted(graph.nodes))
    nodes = [int(u) for u, _v, *_ in edges]
    start = nodes.index(min(nodes))
    return nodes[start:] + nodes[:start]
