"""Read e-mail with Python's :mod:`email` package: one message (.eml) or a mailbox (.mbox) of
them. Headers become the first lines of the message's text and its tags; attachments are members
ingested as documents of their own."""

from __future__ import annotations

import email
import email.policy
import mimetypes
import re
from dataclasses import dataclass
from email.message import EmailMessage, Message
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import PurePosixPath

from kgrag.ingest.containers.archives import Member
from kgrag.ingest.containers.limits import ContainerRefused
from kgrag.ingest.file_authors import author_names

#: The headers shown at the top of a message's text, in this order.
SHOWN_HEADERS = ("From", "To", "Cc", "Date", "Subject")
_IDENTIFYING = ("From", "To", "Subject", "Date", "Message-ID")


@dataclass(frozen=True, slots=True)
class MailMessage:
    subject: str
    date: str | None
    """The Date header as written (None when absent)."""
    day: str | None
    """The date as YYYY-MM-DD, when the header can be read as one."""
    senders: tuple[str, ...]
    authors: tuple[str, ...]
    """Who wrote it: the From header's names (its address when it gives no name)."""
    recipients: tuple[str, ...]
    text: str
    """The header lines, a blank line, then the body as plain text."""
    html_body: bytes | None
    """The body when the message has HTML only (turned into text by the caller)."""
    attachments: tuple[Member, ...]

    @property
    def title(self) -> str:
        return f"{self.subject} ({self.date})" if self.date else self.subject


def _header(msg: Message, name: str) -> str:
    try:
        value = msg.get(name)
    except Exception:  # a malformed header the policy cannot parse: read it raw
        value = msg.get_all(name, failobj=[None])[0] if hasattr(msg, "get_all") else None
    return " ".join(str(value).split()) if value is not None else ""


def _addresses(value: str) -> tuple[str, ...]:
    try:
        return tuple(a.lower() for _, a in getaddresses([value]) if "@" in a)
    except Exception:
        return ()


def _authors(value: str) -> tuple[str, ...]:
    try:
        return author_names(name or address for name, address in getaddresses([value]))
    except Exception:
        return ()


def _day(date: str) -> str | None:
    try:
        return parsedate_to_datetime(date).date().isoformat()
    except (TypeError, ValueError, IndexError):
        return None


#: The longest header field read, and the most header text of one message (all its parts):
#: Python's header parser takes time growing with the square of a field's length (a field of
#: 64 KB 1.6 s, one of 2 MB in a fuzzed message more than two minutes). RFC 5322 lines are at
#: most 998 characters; a long folded recipient list is some thousands.
MAX_HEADER_CHARS = 32_000
MAX_HEADERS_CHARS = 256_000


def _check_headers(msg: Message) -> None:
    """:class:`ContainerRefused` when a header of ``msg`` (or of one of its parts) is too long
    to parse in reasonable time."""
    total = 0
    for part in msg.walk():
        for name, value in part.raw_items():
            size = len(value) if isinstance(value, str) else 0
            total += size
            if size > MAX_HEADER_CHARS:
                raise ContainerRefused(
                    f"its {name[:40]} header is {size:,} characters long, over the "
                    f"{MAX_HEADER_CHARS:,} read (a damaged message?); not read"
                )
    if total > MAX_HEADERS_CHARS:
        raise ContainerRefused(
            f"its headers hold {total:,} characters, over the {MAX_HEADERS_CHARS:,} read "
            "(a damaged message?); not read"
        )


def read_message(data: bytes) -> MailMessage:
    """Parse one message; :class:`ContainerRefused` when it is not an e-mail message at all,
    or its headers are too long to read (:data:`MAX_HEADER_CHARS`)."""
    # the headers are measured as compat32 reads them (raw), before the default policy parses
    # any: it does while it splits the parts (Content-Type)
    _check_headers(email.message_from_bytes(data, policy=email.policy.compat32))
    msg = email.message_from_bytes(data, policy=email.policy.default)
    if not any(_header(msg, h) for h in _IDENTIFYING):
        raise ContainerRefused(
            "not an e-mail message: it has none of the From, To, Subject, Date or "
            "Message-ID headers"
        )
    subject = _header(msg, "Subject") or "(no subject)"
    date = _header(msg, "Date") or None
    lines = [f"{h}: {v}" for h in SHOWN_HEADERS if (v := _header(msg, h))]
    body, html_body = _body(msg)
    text = "\n".join(lines) + "\n\n" + body
    return MailMessage(
        subject=subject,
        date=date,
        day=_day(date) if date else None,
        senders=_addresses(_header(msg, "From")),
        authors=_authors(_header(msg, "From")),
        recipients=_addresses(", ".join(_header(msg, h) for h in ("To", "Cc"))),
        text=text.strip() + "\n",
        html_body=html_body if not body.strip() else None,
        attachments=tuple(_attachments(msg)),
    )


def _decoded(part: Message) -> str:
    if isinstance(part, EmailMessage):
        try:
            content = part.get_content()
            if isinstance(content, str):
                return content
        except (LookupError, KeyError, ValueError, AssertionError):
            pass  # an unknown charset or a damaged part: decode the bytes leniently
    payload = part.get_payload(decode=True)
    if isinstance(payload, bytes):
        charset = part.get_content_charset() or "utf-8"
        try:
            return payload.decode(charset, errors="replace")
        except LookupError:
            return payload.decode("utf-8", errors="replace")
    return ""


def _body(msg: Message) -> tuple[str, bytes | None]:
    """The plain-text body, and the HTML one's bytes when there is no plain text."""
    part: Message | None = msg
    if isinstance(msg, EmailMessage):
        part = msg.get_body(preferencelist=("plain", "html"))
    if part is None:
        return "", None
    text = _decoded(part)
    if part.get_content_type() == "text/html":
        return "", text.encode("utf-8")
    if part.get_content_maintype() != "text":
        return "", None
    return text.replace("\r\n", "\n"), None


def _attachments(msg: Message) -> list[Member]:
    out: list[Member] = []
    if not isinstance(msg, EmailMessage) or not msg.is_multipart():
        return out
    used: set[str] = set()
    for n, part in enumerate(msg.iter_attachments(), start=1):
        payload: bytes | None
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload()
            first = inner[0] if isinstance(inner, list) and inner else None
            payload = first.as_bytes() if isinstance(first, Message) else None
            default_ext = ".eml"
        else:
            decoded = part.get_payload(decode=True)
            payload = decoded if isinstance(decoded, bytes) else None
            default_ext = mimetypes.guess_extension(part.get_content_type()) or ".bin"
        if payload is None:
            continue
        filename = part.get_filename()
        # mail clients keep only the last part of a name: an attachment never names a folder
        name = PurePosixPath(filename.replace("\\", "/")).name if filename else ""
        name = name.strip() or f"attachment-{n}{default_ext}"
        if name in used:
            name = f"{n}-{name}"
        used.add(name)
        out.append(Member(name, payload))
    return out


def split_mbox(data: bytes) -> list[bytes]:
    """The messages of an mbox file (``From `` lines separate them; ``>From `` is unescaped)."""
    if not data.startswith(b"From "):
        raise ContainerRefused("not an mbox mailbox: it does not start with a 'From ' line")
    messages: list[list[bytes]] = []
    previous_blank = True
    for line in data.splitlines(keepends=True):
        if line.startswith(b"From ") and previous_blank:
            messages.append([])
        else:
            if re.match(rb">+From ", line):
                line = line[1:]
            messages[-1].append(line)
        previous_blank = not line.strip()
    return [b"".join(m) for m in messages if b"".join(m).strip()]
