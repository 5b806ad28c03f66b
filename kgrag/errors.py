"""The exception tree of kgrag. Every error says what failed and what to do about it.

::

    KgragError
    ├── ConfigError               bad or missing configuration
    ├── DependencyMissingError    an optional extra is not installed (names the extra)
    ├── StoreError                the graph store failed
    │   ├── StoreUnavailableError     cannot connect / the server process died
    │   ├── EmbeddingSpaceMismatchError  store built with another embedding model or dimension
    │   ├── MigrationError            a schema migration failed
    │   └── QueryRefusedError         a query was refused (write in a read path, unknown label, ...)
    ├── InvalidKeyError           a value that would be an id (session id, ...) is not one
    ├── InvalidAclError           an ACL entry is not 'user:NAME', 'group:NAME' or '*'
    ├── InvalidTextError          input text is not Unicode, or a question cannot be asked
    ├── ModelError                a model (embedder, transcriber, CLIP, LLM) failed
    ├── IngestError               one input could not be ingested (names the file and the reason)
    │   └── MediaTooLongError         a recording is longer than KGRAG_MAX_MEDIA_SECONDS
    ├── PlanError                 a plan is invalid (names the step and the reason)
    ├── ExecutionError            a step failed while running
    │   └── CancelledError            work stopped cooperatively (e.g. its client went away)
    └── NotFoundError             an id (query, document) does not exist
"""

from __future__ import annotations


class KgragError(Exception):
    """Root of every error kgrag raises on purpose."""

    exit_code = 1


class ConfigError(KgragError):
    """Configuration is missing or invalid."""

    exit_code = 3


class UnsafeBindError(KgragError):
    """``kgrag serve`` asked to listen beyond loopback without authentication."""

    exit_code = 2


class DependencyMissingError(KgragError):
    """An optional dependency is not installed."""

    exit_code = 3

    def __init__(
        self, package: str, extra: str, *, command: str | None = None, note: str | None = None
    ) -> None:
        #: a shell command that installs the package on this Python, and nothing else (the
        #: message ends with it, so that it can be copied; ``note`` comes before it)
        self.command = command or f"pip install 'kgrag[{extra}]'"
        said = f"{note}; " if note else ""
        super().__init__(
            f"the optional package {package!r} is not installed; {said}install it with: "
            f"{self.command}"
        )
        self.package = package
        self.extra = extra


class StoreError(KgragError):
    """The graph store failed."""

    exit_code = 4


class StoreUnavailableError(StoreError):
    """The store cannot be reached."""


class EmbeddingSpaceMismatchError(StoreError):
    """The store was built with another embedding model or dimension."""


class MigrationError(StoreError):
    """A schema migration failed."""


class QueryRefusedError(StoreError):
    """A query was refused before it reached the database."""


class InvalidKeyError(KgragError):
    """A value that would be stored under a unique constraint (an id, a session id, a name) is
    empty, has surrounding whitespace or control characters, or is too long. Refused before any
    query runs (kgrag.graph.keys): such values crash FalkorDB 4.22."""

    exit_code = 2

    def __init__(self, what: str, problem: str) -> None:
        super().__init__(
            f"invalid {what}: it {problem}. Use a non-empty string without surrounding "
            "whitespace or control characters, of at most 1,024 bytes."
        )
        self.what = what
        self.problem = problem


class InvalidAclError(KgragError, ValueError):
    """An ACL entry given as input is not ``user:NAME``, ``group:NAME`` or ``*`` (a bare name
    is refused: it would not say whether it is a user or a group). Raised by
    :func:`kgrag.acl.parse_principal`; a ``ValueError`` too, so pydantic models report it as a
    validation error of the field."""

    exit_code = 2

    def __init__(self, value: str, problem: str) -> None:
        super().__init__(f"invalid ACL entry {value!r}: it {problem}")
        self.value = value
        self.problem = problem


class InvalidTextError(KgragError, ValueError):
    """Text given as input (a question, a flag's reason, a user name, a session id...) is not
    valid Unicode: it holds a lone surrogate, what invalid UTF-8 in a command-line argument
    becomes in Python (``surrogateescape``) and what a JSON ``"\\udcff"`` escape decodes to.
    No store can hold it. A question is refused too when it holds a control character other
    than whitespace (a NUL: FalkorDB cannot store it) or no word at all (``""``, ``"???"``).
    Refused at the input boundary (:mod:`kgrag.core.text`) before anything runs; a
    ``ValueError`` too, so a pydantic model reports it as an error of its field."""

    exit_code = 2

    def __init__(self, what: str, problem: str) -> None:
        super().__init__(f"invalid {what}: {problem}")
        self.what = what
        self.problem = problem


class ModelError(KgragError):
    """A model failed."""

    exit_code = 5


class IngestError(KgragError):
    """One input could not be ingested."""

    exit_code = 2

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class EmptyInputError(IngestError):
    """A file that holds nothing to ingest (0 bytes, or only whitespace): skipped as ``empty``
    when met in a folder, not a failure."""


class MediaTooLongError(IngestError):
    """A recording is longer than the media duration limit (refused before it is decoded)."""

    def __init__(self, path: str, duration_s: float, max_seconds: float) -> None:
        super().__init__(
            path,
            f"the recording is {duration_s:,.0f} s long, more than the {max_seconds:,.0f} s "
            "allowed (KGRAG_MAX_MEDIA_SECONDS); it was not decoded",
        )
        self.duration_s = duration_s
        self.max_seconds = max_seconds


class PlanError(KgragError):
    """A plan is invalid."""

    exit_code = 6

    def __init__(self, reason: str, step_id: int | None = None) -> None:
        where = f"step {step_id}: " if step_id is not None else ""
        super().__init__(f"invalid plan: {where}{reason}")
        self.step_id = step_id
        self.reason = reason


class ExecutionError(KgragError):
    """A step failed while running."""

    exit_code = 7


class CancelledError(ExecutionError):
    """Work was stopped cooperatively (:class:`kgrag.cancel.CancelToken`), e.g. because the
    client that asked went away. ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"cancelled: {reason}")
        self.reason = reason


class NotFoundError(KgragError):
    """An id does not exist in the store."""

    exit_code = 8
