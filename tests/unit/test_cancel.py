"""kgrag.cancel: a token is set once (its first reason kept); a child is cancelled with its
parent, and alone without touching the parent."""

from __future__ import annotations

import pytest

from kgrag.cancel import CancelToken, check
from kgrag.errors import CancelledError


def test_a_child_follows_its_parent_and_can_be_cancelled_alone() -> None:
    parent = CancelToken()
    step, other = parent.child(), parent.child()
    check(None)  # no token: nothing to check
    step.check()
    step.cancel("the step timed out")
    step.cancel("a later reason")
    with pytest.raises(CancelledError) as info:
        step.check()
    assert info.value.reason == "the step timed out"
    assert not parent.cancelled and not other.cancelled
    parent.cancel("the client disconnected")
    with pytest.raises(CancelledError) as info:
        check(other)
    assert info.value.reason == "the client disconnected"
