"""Document ACLs: namespaced principals, parsed in one place.

A stored ACL entry is ``user:NAME``, ``group:NAME`` or ``*`` (public), so a group named like a
user matches nothing of that user. Every ACL given as input (``kgrag ingest --acl``, a manifest
line's ``acl``, ``IngestRequest.acl``, ``KnowledgeAgent.ingest(paths, acl)``) goes through
:func:`parse_principal` (one entry) or :func:`parse_acl` (a list): a bare name is refused with
:class:`~kgrag.errors.InvalidAclError` naming it and saying what to write instead. Pydantic models
take entries as :data:`AclEntry`, which runs the same function (and publishes
:data:`PRINCIPAL_PATTERN`, which accepts exactly the same strings, in the JSON schema).

A reader's principals (``AccessContext.principals``) are built with
:func:`kgrag.core.user_principal` and :func:`kgrag.core.group_principal`; every read compares them
with ``d.acl`` in Cypher.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

from kgrag.core.access import GROUP, PUBLIC, USER
from kgrag.errors import InvalidAclError
from kgrag.graph.keys import KEY_EDGE_CHARS, KEY_INNER_CHARS

NAMESPACES = (USER, GROUP)
#: Longest ACL entry, namespace included.
PRINCIPAL_MAX_CHARS = 256
_NAME = rf"[^{KEY_EDGE_CHARS}](?:[^{KEY_INNER_CHARS}]*[^{KEY_EDGE_CHARS}])?"
#: What an ACL entry may be: ``*``, or ``user:`` / ``group:`` and a name without surrounding
#: whitespace or control characters (the same in Python and ECMAScript regex syntax).
PRINCIPAL_PATTERN = rf"^(?:\*|(?:{USER}|{GROUP}):{_NAME})$"
_PRINCIPAL = re.compile(PRINCIPAL_PATTERN)


def parse_principal(value: str) -> str:
    """``value`` if it is a valid ACL entry (``user:NAME``, ``group:NAME`` or ``*``), else
    :class:`InvalidAclError` naming it and what is wrong. Nothing is stripped or rewritten."""
    if len(value) > PRINCIPAL_MAX_CHARS:
        raise InvalidAclError(
            value, f"is {len(value):,} characters long; at most {PRINCIPAL_MAX_CHARS} are allowed"
        )
    surrogate = next((ch for ch in value if 0xD800 <= ord(ch) <= 0xDFFF), None)
    if surrogate is not None:
        raise InvalidAclError(value, f"contains the lone surrogate U+{ord(surrogate):04X}")
    if _PRINCIPAL.fullmatch(value):
        return value
    if value != value.strip():
        raise InvalidAclError(value, "starts or ends with whitespace")
    namespace, colon, _ = value.partition(":")
    if colon and namespace in NAMESPACES:
        raise InvalidAclError(
            value,
            f"has no valid name after '{namespace}:' (a name is non-empty, without surrounding "
            "whitespace or control characters)",
        )
    example = value.strip() or "NAME"
    raise InvalidAclError(
        value,
        f"is not a namespaced principal: write 'user:{example}' for a user or "
        f"'group:{example}' for a group (or '*' for everyone)",
    )


def parse_acl(values: Iterable[str]) -> tuple[str, ...]:
    """Every entry checked with :func:`parse_principal`; the ACL in its canonical form (sorted,
    each entry once). An empty ACL stays empty: :func:`stored_acl` makes it public."""
    if isinstance(values, str):  # a lone string would be read as its characters
        values = [values]
    return tuple(sorted({parse_principal(v) for v in values}))


def stored_acl(acl: Iterable[str]) -> tuple[str, ...]:
    """ACL as stored: the given (valid) principals, or the public principal when none."""
    return parse_acl(acl) or (PUBLIC,)


#: An ACL entry in a pydantic model: validated by :func:`parse_principal` (422 over HTTP, a
#: malformed manifest line, ...), described by :data:`PRINCIPAL_PATTERN` in the JSON schema.
AclEntry = Annotated[
    str,
    AfterValidator(parse_principal),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": PRINCIPAL_PATTERN,
            "maxLength": PRINCIPAL_MAX_CHARS,
            "description": "'user:NAME', 'group:NAME' or '*' (everyone)",
        }
    ),
]
