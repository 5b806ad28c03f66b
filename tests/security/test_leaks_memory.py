"""Conversation memory is read only with the principals it was written with (issue 14, item 4):
the same user (or none) holding the same groups. A turn asked with a group is not the memory of
the same user asking without it, nor of an anonymous caller who knows the session id; the
asker's own follow-up does use it (so the checks can fail). On both engines."""

from __future__ import annotations

from pathlib import Path

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.graph.store import GraphStore
from kgrag.modalities import factory
from tests.security.principals import group_acl
from tests.support.engines import Engine

SECRET = "Hedy Lamarr"
REPORT = (
    "The Zephyr turbine ZT9 was designed by Hedy Lamarr in 1941. "
    "The Zephyr turbine ZT9 spins at nine thousand turns a minute.\n"
)
QUESTION = "Who designed the Zephyr turbine ZT9?"
FOLLOW_UP = "give me that as a list"


def _agent_with_report(store: GraphStore, folder: Path) -> KnowledgeAgent:
    """An agent on ``store`` holding the report, readable by group team-a only."""
    agent = KnowledgeAgent(store, factory.text_embedder(Settings()))
    report = folder / "zephyr.md"
    report.write_text(REPORT, encoding="utf-8")
    assert agent.ingest([str(report)], acl=group_acl("team-a")).failed == 0
    return agent


def test_memory_needs_the_same_user_and_groups(engine: Engine, tmp_path: Path) -> None:
    store = engine.open()
    try:
        agent = _agent_with_report(store, tmp_path)

        first = agent.ask(QUESTION, session_id="s1", user="ada", groups=("team-a", "team-b"))
        assert SECRET in first.answer
        # ada without team-a, anyone without a name, and ada with only one of the two groups:
        # no memory of the turn, so nothing of its answer comes back reformatted
        for user, groups in ((None, ()), ("ada", ()), ("ada", ("team-b",))):
            other = agent.ask(FOLLOW_UP, session_id="s1", user=user, groups=groups)
            assert SECRET not in other.answer, (user, groups, other.answer)
            assert other.iterations >= 1, (user, groups)  # answered afresh, not from memory
            # nor rewritten with the earlier question's subject (the memory's own text)
            assert "Zephyr" not in (other.resolved_question or ""), (user, groups)
        # the same principals, groups in another order: her memory (a reformat of her answer)
        again = agent.ask(FOLLOW_UP, session_id="s1", user="ada", groups=("team-b", "team-a"))
        assert again.iterations == 0 and SECRET in again.answer
    finally:
        store.close()


def test_anonymous_turns_are_not_shared_with_a_group(engine: Engine, tmp_path: Path) -> None:
    """An anonymous caller with a group and one without are different askers."""
    store = engine.open()
    try:
        agent = _agent_with_report(store, tmp_path)
        first = agent.ask(QUESTION, session_id="s2", groups=("team-a",))
        assert SECRET in first.answer
        # "it" would be resolved to the earlier turn's subject if the turn were the stranger's
        stranger = agent.ask("who designed it?", session_id="s2")
        assert "Zephyr" not in (stranger.resolved_question or ""), stranger.resolved_question
        assert SECRET not in stranger.answer
    finally:
        store.close()
