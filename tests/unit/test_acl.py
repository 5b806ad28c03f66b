"""ACL entries are namespaced (kgrag.acl): what is accepted, what is refused and how it is said,
and the JSON-schema pattern the HTTP API publishes accepts exactly what the parser accepts."""

from __future__ import annotations

import re

import pytest

from kgrag.acl import PRINCIPAL_MAX_CHARS, PRINCIPAL_PATTERN, parse_acl, parse_principal, stored_acl
from kgrag.core import AccessContext
from kgrag.errors import InvalidAclError

VALID = ["*", "user:ada", "group:team-a", "user:ada@example.org", "group:a b", "user:x:y"]
INVALID = {
    "ada": "not a namespaced principal: write 'user:ada' for a user or 'group:ada' for a group",
    "": "not a namespaced principal",
    "User:ada": "not a namespaced principal",
    "role:admin": "not a namespaced principal",
    "user:": "no valid name after 'user:'",
    "group: ops": "no valid name after 'group:'",
    "user:ada ": "starts or ends with whitespace",
    " user:ada": "starts or ends with whitespace",
    "user:a\x00b": "no valid name after 'user:'",
    "user:a\nb": "no valid name after 'user:'",
    "user:\ud800": "lone surrogate U+D800",
    "**": "not a namespaced principal",
    "user:" + "x" * PRINCIPAL_MAX_CHARS: f"at most {PRINCIPAL_MAX_CHARS}",
}


@pytest.mark.parametrize("value", VALID)
def test_namespaced_entries_and_the_public_one_are_accepted_unchanged(value: str) -> None:
    assert parse_principal(value) == value
    assert re.fullmatch(PRINCIPAL_PATTERN, value) and len(value) <= PRINCIPAL_MAX_CHARS


@pytest.mark.parametrize(("value", "message"), INVALID.items())
def test_other_entries_are_refused_naming_the_value(value: str, message: str) -> None:
    with pytest.raises(InvalidAclError) as caught:
        parse_principal(value)
    assert f"invalid ACL entry {value!r}" in str(caught.value)
    assert message in str(caught.value)
    assert caught.value.exit_code == 2
    if "\ud800" not in value:  # no JSON text is a lone surrogate: the schema agrees otherwise
        pattern_accepts = re.fullmatch(PRINCIPAL_PATTERN, value) is not None
        assert not (pattern_accepts and len(value) <= PRINCIPAL_MAX_CHARS)


def test_an_acl_is_canonical_and_public_when_empty() -> None:
    assert parse_acl(["user:b", "group:a", "user:b"]) == ("group:a", "user:b")
    assert parse_acl("user:ada") == ("user:ada",)  # one string is one entry, not its letters
    assert stored_acl([]) == ("*",)
    assert stored_acl(["group:a"]) == ("group:a",)
    with pytest.raises(InvalidAclError, match="'team-a'"):
        parse_acl(["user:ada", "team-a"])


def test_a_readers_principals_are_namespaced() -> None:
    access = AccessContext(user="ada", groups=("team-a", "ada"))
    assert access.principals == ["*", "group:team-a", "group:ada", "user:ada"]
    assert AccessContext().principals == ["*"]
