"""Parse any input into its documents: a file is one document; a container is its own document
followed by its members' (recursively, within :class:`ContainerLimits`)."""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
from collections.abc import Iterator
from pathlib import Path, PurePath, PurePosixPath

from kgrag.errors import EmptyInputError, IngestError
from kgrag.ingest import formats
from kgrag.ingest.containers._outlook import msg_to_rfc822
from kgrag.ingest.containers.archives import (
    BZIP2,
    GZIP,
    XZ,
    Compression,
    Entry,
    Member,
    Refused,
    decompress,
    tar_members,
    zip_members,
)
from kgrag.ingest.containers.kinds import ContainerKind, compressed_name, container_kind
from kgrag.ingest.containers.limits import Budget, ContainerLimits, ContainerRefused
from kgrag.ingest.containers.mail import MailMessage, read_message, split_mbox
from kgrag.ingest.formats.html import html_to_text
from kgrag.ingest.models import (
    Modality,
    ParentLink,
    ParentRelation,
    ParsedDocument,
    ParsedInputs,
    ParsedPage,
    SkipKind,
    SourceItem,
    UnsupportedInput,
)
from kgrag.ingest.parsers import parse, parse_bytes, read_file
from kgrag.ingest.sniff import SNIFF_BYTES, may_be_text, reads_as_text
from kgrag.ingest.sources import file_type, sniffed_text_type, unsupported_reason
from kgrag.ingest.unexpected import failure_reason, must_stop, reader_name
from kgrag.modalities.audio import DEFAULT_MAX_MEDIA_SECONDS

#: one compressed file, and compressed tar archives: their compression
_SINGLE: dict[ContainerKind, Compression] = {"gzip": GZIP, "bzip2": BZIP2, "xz": XZ}
_TARRED: dict[ContainerKind, Compression] = {"tgz": GZIP, "tbz2": BZIP2, "txz": XZ}

__all__ = ["ContainerLimits", "parse_all"]

#: Members named in a container's own document (its text lists what it holds).
MAX_LISTED = 500


def parse_all(
    item: SourceItem,
    max_bytes: int,
    *,
    ocr_enabled: bool = True,
    max_media_seconds: float = DEFAULT_MAX_MEDIA_SECONDS,
    limits: ContainerLimits | None = None,
) -> ParsedInputs:
    """``item``'s documents, and what was refused. Never raises for bad input: a file that
    cannot be read is one failure (an empty one a skip); a member that cannot be read is a
    failure or skip of its own (``archive!member``) and the container's other members stay;
    a container broken as a whole (corrupt, a bomb) yields no document at all. An exception
    no reader meant (a parser's bug, ``RecursionError``, ``MemoryError``) is that file's (or
    member's) failure too, "could not be read: the PDF reader failed (KeyError: '/Root')"
    (:mod:`kgrag.ingest.unexpected`); only an interrupt or an exit goes through."""
    work = _Expansion(
        Budget(limits or ContainerLimits(max_member_bytes=max_bytes)),
        item.tags,
        ocr_enabled,
        max_media_seconds,
    )
    try:
        if container_kind(item.path) is None:
            work.documents.append(
                parse(
                    item,
                    max_bytes,
                    ocr_enabled=ocr_enabled,
                    max_media_seconds=max_media_seconds,
                )
            )
        else:
            data = read_file(item.path, max_bytes)
            work.one(item, data, PurePosixPath(item.path.name), depth=1, parent=None)
    except EmptyInputError as e:
        return ParsedInputs(refused=(_refusal(e.path, e.reason, "empty"),))
    except _Unsupported as e:
        return ParsedInputs(refused=(_refusal(e.path, e.reason, "unsupported_type"),))
    except IngestError as e:
        return ParsedInputs(refused=(_refusal(e.path, e.reason, None),))
    except Exception as e:  # a reader's bug, a library's own error: this file fails alone
        if must_stop(e):
            raise
        reason = failure_reason(_unreadable(item.path, item.modality), e, str(item.path))
        return ParsedInputs(refused=(_refusal(str(item.path), reason, None),))
    return ParsedInputs(documents=tuple(work.documents), refused=tuple(work.refused))


#: How a message's HTML body is named in its refusal's path (``inspection.eml!HTML body``).
HTML_BODY = "HTML body"


def _unreadable(name: PurePath, modality: str) -> str:
    return f"could not be read: {reader_name(name, modality)} failed"


def _refusal(path: str, reason: str, kind: SkipKind | None) -> UnsupportedInput:
    if kind is None:
        return UnsupportedInput(path=path, reason=reason, explicit=True)
    return UnsupportedInput(path=path, reason=reason, explicit=False, kind=kind)


class _Unsupported(IngestError):
    """A .gz whose one file is of a type kgrag does not read: skipped, not failed."""


def _member_type(name: PurePosixPath, data: bytes) -> tuple[Modality, str] | None:
    found = file_type(name.suffix)
    if found is None and may_be_text(name) and reads_as_text(data[:SNIFF_BYTES], lambda: data):
        found = sniffed_text_type(name)
    return found


class _Expansion:
    def __init__(
        self, budget: Budget, tags: tuple[str, ...], ocr_enabled: bool, max_media_seconds: float
    ) -> None:
        self.budget = budget
        self.tags = tags
        self.ocr_enabled = ocr_enabled
        self.max_media_seconds = max_media_seconds
        self.documents: list[ParsedDocument] = []
        self.refused: list[UnsupportedInput] = []

    def one(
        self,
        item: SourceItem,
        data: bytes,
        name: PurePosixPath,
        *,
        depth: int,
        parent: ParentLink | None,
    ) -> None:
        """Parse ``data`` (the content of ``item``, whose format ``name`` decides)."""
        kind = container_kind(name)
        if kind is None:
            doc = parse_bytes(
                item,
                data,
                name=name,
                ocr_enabled=self.ocr_enabled,
                max_media_seconds=self.max_media_seconds,
            )
            self.documents.append(doc.model_copy(update={"parent": parent}))
            return
        limit = self.budget.limits.max_depth
        if depth > limit:
            raise IngestError(
                str(item.path),
                f"containers nested over {limit} deep (archives in archives); not read "
                "(an archive bomb?)",
            )
        try:
            if kind in _SINGLE:
                self._compressed(item, data, name, depth, parent, _SINGLE[kind])
            elif kind == "eml":
                self._message(item, read_message(data), data, depth, parent)
            elif kind == "msg":  # Outlook: rewritten as RFC 822, then read as an .eml
                self._message(item, read_message(msg_to_rfc822(data)), data, depth, parent)
            elif kind == "mbox":
                self._mailbox(item, data, name.name, depth, parent)
            else:
                entries = (
                    zip_members(data, self.budget)
                    if kind == "zip"
                    else tar_members(data, self.budget, _TARRED.get(kind))
                )
                self._archive(item, data, name.name, entries, depth, parent)
        except ContainerRefused as e:
            raise IngestError(str(item.path), e.reason) from e

    # -- kinds ----------------------------------------------------------------------------------
    def _compressed(
        self,
        item: SourceItem,
        data: bytes,
        name: PurePosixPath,
        depth: int,
        parent: ParentLink | None,
        compression: Compression,
    ) -> None:
        """A .gz (.bz2, .xz) of one file is that file: read as the type of the name inside (an
        .svgz as an .svg)."""
        inner = decompress(data, self.budget, compression)
        inner_name = PurePosixPath(compressed_name(name))
        found = _member_type(inner_name, inner)
        if found is None:
            raise _Unsupported(
                str(item.path),
                f"a {compression.name}-compressed {unsupported_reason(inner_name.suffix)}",
            )
        modality, mime = found
        if modality == "audio":
            raise _Unsupported(
                str(item.path), f"{compression.name}-compressed recordings are not read"
            )
        inner_item = item.model_copy(update={"modality": modality, "mime": mime})
        self.one(inner_item, inner, inner_name, depth=depth + 1, parent=parent)

    def _archive(
        self,
        item: SourceItem,
        data: bytes,
        name: str,
        entries: Iterator[Entry],
        depth: int,
        parent: ParentLink | None,
    ) -> None:
        at = len(self.documents)
        names: list[str] = []
        for entry in entries:
            names.append(entry.name)
            if isinstance(entry, Refused):
                path = f"{item.path}!{entry.name}"
                self.refused.append(_refusal(path, entry.reason, entry.kind))
            else:
                self._member(item, entry, depth, "CONTAINED_IN")
        if not names:
            raise EmptyInputError(str(item.path), "archive holds no files")
        listed = "\n".join(names[:MAX_LISTED])
        more = f"\n… and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
        text = f"Archive {name} holds {len(names)} files:\n{listed}{more}\n"
        self.documents.insert(at, self._own(item, data, item.title or name, text, parent))

    def _message(
        self,
        item: SourceItem,
        message: MailMessage,
        data: bytes,
        depth: int,
        parent: ParentLink | None,
    ) -> None:
        text = message.text
        if message.html_body is not None:
            body, broke = _html_text(item, message.html_body)
            text += "\n" + body
            if broke is not None:
                path = f"{item.path}!{HTML_BODY}"
                self.refused.append(_refusal(path, broke, "unreadable"))
        tags = tuple(
            dict.fromkeys(
                (
                    *item.tags,
                    *(f"from:{a}" for a in message.senders),
                    *(f"to:{a}" for a in message.recipients),
                    *((f"date:{message.day}",) if message.day else ()),
                )
            )
        )
        own = item.model_copy(update={"tags": tags})
        self.budget.count_members(len(message.attachments))
        title = item.title or message.title
        self.documents.append(self._own(own, data, title, text, parent, message.authors))
        for attachment in message.attachments:
            self._member(item, attachment, depth, "ATTACHED_TO")

    def _mailbox(
        self, item: SourceItem, data: bytes, name: str, depth: int, parent: ParentLink | None
    ) -> None:
        messages = split_mbox(data)
        if not messages:
            raise EmptyInputError(str(item.path), "mailbox holds no messages")
        self.budget.count_members(len(messages))
        headers = email.parser.BytesHeaderParser(policy=email.policy.compat32)
        lines = []
        at = len(self.documents)
        for n, raw in enumerate(messages, start=1):
            member = f"message-{n}.eml"
            subject = " ".join(str(headers.parsebytes(raw).get("Subject", "")).split())
            lines.append(f"{member}: {subject or '(no subject)'}")
            self._member(item, Member(member, raw), depth, "CONTAINED_IN")
        text = f"Mailbox {name} holds {len(messages)} messages:\n" + "\n".join(lines[:MAX_LISTED])
        self.documents.insert(at, self._own(item, data, item.title or name, text, parent))

    # -- helpers --------------------------------------------------------------------------------
    def _own(
        self,
        item: SourceItem,
        data: bytes,
        title: str,
        text: str,
        parent: ParentLink | None,
        authors: tuple[str, ...] = (),
    ) -> ParsedDocument:
        return ParsedDocument(
            source=item,
            sha256=hashlib.sha256(data).hexdigest(),
            bytes=len(data),
            title=title,
            pages=(ParsedPage(number=None, text=text),),
            parent=parent,
            container=True,
            authors=authors,
        )

    def _member(
        self, container: SourceItem, member: Member, depth: int, relation: ParentRelation
    ) -> None:
        name = PurePosixPath(member.name)
        path = Path(f"{container.path}!{member.name}")
        found = _member_type(name, member.data)
        if found is None:
            self.refused.append(
                _refusal(str(path), unsupported_reason(name.suffix), "unsupported_type")
            )
            return
        modality, mime = found
        if modality == "audio":
            reason = "recordings inside archives and messages are not read; extract it"
            self.refused.append(_refusal(str(path), reason, "unsupported_type"))
            return
        child = SourceItem(
            path=path, acl=container.acl, tags=self.tags, modality=modality, mime=mime
        )
        docs, refused = len(self.documents), len(self.refused)
        link = ParentLink(uri=str(container.path), relation=relation)
        try:
            self.one(child, member.data, name, depth=depth + 1, parent=link)
        except IngestError as e:
            # what a broken nested container had yielded goes with it
            del self.documents[docs:], self.refused[refused:]
            kind: SkipKind | None = None
            if isinstance(e, EmptyInputError):
                kind = "empty"
            elif isinstance(e, _Unsupported):
                kind = "unsupported_type"
            self.refused.append(_refusal(str(path), e.reason, kind))
        except Exception as e:  # as in parse_all: this member fails, the others stay
            if must_stop(e):
                raise
            del self.documents[docs:], self.refused[refused:]
            reason = failure_reason(_unreadable(name, modality), e, str(path))
            self.refused.append(_refusal(str(path), reason, None))


def _html_text(item: SourceItem, body: bytes) -> tuple[str, str | None]:
    """An HTML-only body as text: through the registered HTML format when there is one, else
    (or when that reader breaks on it) with its tags dropped; and, when the reader broke, why
    (the message is read all the same: one part's reader is not the message's)."""
    fmt = formats.for_suffix(".html")
    broke = None
    if fmt is not None:
        try:
            content = fmt.parse(item, body)
            return "\n\n".join(p.text for p in content.pages), None
        except IngestError:
            pass
        except Exception as e:  # a reader's bug: the body is read with its tags dropped
            if must_stop(e):
                raise
            reader = reader_name(PurePosixPath("body.html"))
            said = failure_reason(f"{reader} failed", e, f"{item.path}!{HTML_BODY}")
            broke = f"{said}; the message's HTML body was read with its tags dropped"
    return html_to_text(body.decode("utf-8", errors="replace")), broke
