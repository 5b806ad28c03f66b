"""API keys in a file the operator manages (``KGRAG_API_KEYS_FILE``, ``kgrag auth ...``).

A key is ``kgr_<key id>_<secret>``: the id (12 hex digits) finds its entry, the secret is 256
random bits (``secrets.token_urlsafe(32)``). The file holds only the SHA-256 of each key: a key
of 256 random bits cannot be guessed or brute-forced from its hash, so a slow password hash
would add nothing; hashes are compared with :func:`hmac.compare_digest`. The file is JSON,
written atomically (a new file, fsynced, renamed over the old) with mode 0600, under a lock so
two ``kgrag auth`` commands at once lose nothing. The server re-reads it when it changes, so an
added or revoked key takes effect without a restart."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field, ValidationError, field_validator

from kgrag.auth.principal import Principal, Role, check_name
from kgrag.core import Frozen
from kgrag.errors import ConfigError, NotFoundError

PREFIX = "kgr_"
_KEY = re.compile(r"^kgr_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
FILE_VERSION = 1


class ApiKey(Frozen):
    """One entry of the key file (no secret: its hash)."""

    id: str = Field(pattern=r"^[0-9a-f]{12}$")
    user: str
    groups: tuple[str, ...] = ()
    roles: tuple[Role, ...] = Field(min_length=1)
    created: datetime
    expires: datetime | None = None
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @field_validator("user")
    @classmethod
    def _user(cls, v: str) -> str:
        return check_name("user", v)

    @field_validator("groups")
    @classmethod
    def _groups(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(check_name("group", g) for g in v)

    def expired(self, now: datetime) -> bool:
        return self.expires is not None and now >= self.expires

    def principal(self) -> Principal:
        return Principal(
            id=f"key:{self.id}", user=self.user, groups=self.groups, roles=frozenset(self.roles)
        )


class KeyFile(Frozen):
    version: int = FILE_VERSION
    keys: tuple[ApiKey, ...] = ()


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def parse_key(key: str) -> str | None:
    """The key id of a well-formed key, else None."""
    m = _KEY.match(key)
    return m.group(1) if m else None


def read_keys(path: Path) -> KeyFile:
    """The key file; a missing one is empty. :class:`ConfigError` naming the file when it is
    not a valid key file."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return KeyFile()
    except OSError as e:
        raise ConfigError(f"cannot read the API key file {path}: {e.strerror}") from e
    try:
        return KeyFile.model_validate_json(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"the API key file {path} is not valid: {where}: {first['msg']}"
        ) from None


def _write(path: Path, keys: KeyFile) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(keys.model_dump(mode="json"), indent=2) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def add_key(
    path: Path,
    *,
    user: str,
    groups: Sequence[str],
    roles: Sequence[Role],
    expires: datetime | None = None,
) -> tuple[ApiKey, str]:
    """A new key for ``user``: its entry (stored) and the key itself (shown once, never
    stored). ``ValueError`` naming what is wrong for a bad name, no role or a past expiry."""
    if not roles:
        raise ValueError("a key needs at least one role (--role reader|writer|admin|impersonate)")
    now = datetime.now(UTC)
    if expires is not None:
        if expires.tzinfo is None:
            expires = expires.replace(tzinfo=UTC)
        if expires <= now:
            raise ValueError(f"the expiry {expires.isoformat()} is not in the future")
    key_id = secrets.token_hex(6)
    key = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    entry = ApiKey(
        id=key_id,
        user=check_name("user", user),
        groups=tuple(dict.fromkeys(check_name("group", g) for g in groups)),
        roles=tuple(dict.fromkeys(roles)),
        created=now,
        expires=expires,
        sha256=_digest(key),
    )
    with _locked(path):
        current = read_keys(path)
        _write(path, current.model_copy(update={"keys": (*current.keys, entry)}))
    return entry, key


def revoke_key(path: Path, key_id: str) -> ApiKey:
    """Remove key ``key_id`` (:class:`NotFoundError` when there is none)."""
    with _locked(path):
        current = read_keys(path)
        kept = tuple(k for k in current.keys if k.id != key_id)
        if len(kept) == len(current.keys):
            raise NotFoundError(f"no API key {key_id!r} in {path}; `kgrag auth list-keys`")
        _write(path, current.model_copy(update={"keys": kept}))
    return next(k for k in current.keys if k.id == key_id)


class KeyRing:
    """The keys of a file, re-read whenever the file changes (size, mtime or inode)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._by_id: dict[str, ApiKey] = {}

    def _current(self) -> dict[str, ApiKey]:
        try:
            st = self.path.stat()
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            stamp = (0, 0, 0)
        with self._lock:
            if stamp != self._stamp:
                self._by_id = {k.id: k for k in read_keys(self.path).keys}
                self._stamp = stamp
            return self._by_id

    def authenticate(self, key: str) -> Principal:
        """The principal of ``key``; :class:`KeyRejected` with a reason that names nothing of
        the key but its id."""
        key_id = parse_key(key)
        if key_id is None:
            raise KeyRejected("malformed API key")
        entry = self._current().get(key_id)
        # compared even when the id is unknown, so the time taken tells nothing
        expected = entry.sha256 if entry else "0" * 64
        if not hmac.compare_digest(_digest(key), expected) or entry is None:
            raise KeyRejected("unknown or revoked API key")
        if entry.expired(datetime.now(UTC)):
            raise KeyRejected("expired API key")
        return entry.principal()


class KeyRejected(Exception):
    """An API key that does not authenticate (the reason is safe to show)."""
