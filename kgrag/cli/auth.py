"""``kgrag auth``: the API keys of the HTTP server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from kgrag.cli.common import App, JsonOpt, emit, err, state
from kgrag.config import Settings

auth_app = App(
    no_args_is_help=True, help="API keys of the HTTP server (the file KGRAG_API_KEYS_FILE)."
)


def _keys_file(*, write: bool = False) -> Path:
    """KGRAG_API_KEYS_FILE; to ``write`` it, its folder is created first (a ConfigError naming
    the setting and the path when it cannot be)."""
    from kgrag.config import writable_folder
    from kgrag.errors import ConfigError

    path = Settings().api_keys_file
    if path is None:
        raise ConfigError(
            "set KGRAG_API_KEYS_FILE to the API key file (e.g. /etc/kgrag/api-keys.json); "
            "`kgrag serve` reads the same setting"
        )
    if write:
        writable_folder(path.parent, "KGRAG_API_KEYS_FILE")
    return path


def _expiry(value: str | None) -> Any:
    from datetime import UTC, datetime

    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not an ISO 8601 date or time (e.g. 2027-01-31 or "
            "2027-01-31T12:00:00+00:00)",
            param_hint="'--expires'",
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


@auth_app.command("add-key")
def auth_add_key(
    user: Annotated[str, typer.Option("--user", help="the user the key reads as")],
    role: Annotated[
        list[str],
        typer.Option("--role", help="reader, writer, admin or impersonate (repeatable)"),
    ],
    groups: Annotated[str, typer.Option("--groups", help="comma-separated groups")] = "",
    expires: Annotated[
        str | None, typer.Option("--expires", help="ISO 8601 date or time (UTC unless given)")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create an API key and print it once (only its hash is stored)."""
    from kgrag.auth.apikeys import add_key
    from kgrag.auth.principal import Role

    known = {r.value: r for r in Role}
    bad = [r for r in role if r not in known]
    if bad:
        raise typer.BadParameter(
            f"unknown role(s) {', '.join(bad)}; roles: {', '.join(known)}", param_hint="'--role'"
        )
    try:
        entry, key = add_key(
            _keys_file(write=True),
            user=user,
            groups=[g.strip() for g in groups.split(",")] if groups.strip() else [],
            roles=[known[r] for r in role],
            expires=_expiry(expires),
        )
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    if as_json:
        emit({"id": entry.id, "key": key, **entry.model_dump(mode="json", exclude={"sha256"})})
        return
    sys.stdout.write(key + "\n")
    if not state["quiet"]:
        err.print(
            f"key {entry.id} for user {entry.user} "
            f"(roles {', '.join(entry.roles)}; groups {', '.join(entry.groups) or 'none'}): "
            "shown once, store it now",
            markup=False,
        )


@auth_app.command("list-keys")
def auth_list_keys(as_json: JsonOpt = False) -> None:
    """List the API keys (ids, users, groups, roles, dates; never a key)."""
    from kgrag.auth.apikeys import read_keys

    keys = read_keys(_keys_file()).keys
    rows = [k.model_dump(mode="json", exclude={"sha256"}) for k in keys]
    if as_json:
        emit({"keys": rows})
        return
    for r in rows:
        sys.stdout.write(
            f"{r['id']}  {r['user']}  roles={','.join(r['roles'])}  "
            f"groups={','.join(r['groups']) or '-'}  created={r['created']}  "
            f"expires={r['expires'] or 'never'}\n"
        )


@auth_app.command("revoke-key")
def auth_revoke_key(
    key_id: Annotated[str, typer.Argument(help="the key id list-keys shows")],
) -> None:
    """Remove an API key: a running server refuses it from its next request."""
    from kgrag.auth.apikeys import revoke_key

    entry = revoke_key(_keys_file(write=True), key_id)
    if not state["quiet"]:
        err.print(f"revoked key {entry.id} of user {entry.user}", markup=False)
