"""Read an Outlook message (.msg: MAPI properties in an OLE compound file, [MS-OXMSG]) with
``olefile`` and rewrite it as an RFC 822 message, so that it is ingested exactly as an .eml is:
headers as the first lines and tags, the body as text, attachments (embedded messages too) as
documents of their own. Nothing is executed or written to disk; the file is read in memory."""

from __future__ import annotations

import struct
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from kgrag.ingest.containers.limits import ContainerRefused

if TYPE_CHECKING:
    from olefile import OleFileIO

__all__ = ["MAX_EMBEDDED_DEPTH", "msg_to_rfc822"]

#: messages attached to messages are read this deep, no deeper
MAX_EMBEDDED_DEPTH = 3
OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

# MAPI property ids ([MS-OXPROPS])
_SUBJECT = "0037"
_BODY = "1000"
_HTML = "1013"
_SENDER_NAME = "0C1A"
_SENDER_EMAIL = ("5D01", "0C1F")
_DISPLAY_TO = "0E04"
_DISPLAY_CC = "0E03"
_HEADERS = "007D"
_MESSAGE_ID = "1035"
_SUBMIT_TIME = 0x0039
_DELIVERY_TIME = 0x0E06
_ATTACH_DATA = "3701"
_ATTACH_LONG_NAME = "3707"
_ATTACH_NAME = "3704"
_ATTACH_MIME = "370E"
_ATTACH_DISPLAY_NAME = "3001"
_RECIPIENT_EMAIL = ("39FE", "3003")
_RECIPIENT_NAME = "3001"
_PT_SYSTIME = 0x0040


def msg_to_rfc822(data: bytes) -> bytes:
    """The message in ``data`` as RFC 822 bytes; :class:`ContainerRefused` (with the reason)
    when it is not a readable Outlook message."""
    import olefile

    if not data.startswith(OLE_SIGNATURE):
        raise ContainerRefused("not an Outlook .msg file (no OLE compound file signature)")
    try:
        ole = olefile.OleFileIO(data, raise_defects=olefile.DEFECT_INCORRECT)
    except (OSError, ValueError, IndexError, struct.error) as e:
        raise ContainerRefused(
            f"not a readable Outlook .msg file (truncated or damaged): {e}"
        ) from e
    try:
        if not ole.exists("__properties_version1.0"):
            raise ContainerRefused("an OLE file, but not an Outlook message (no MAPI properties)")
        return _message(ole, [], depth=0).as_bytes()
    except (OSError, ValueError, IndexError, struct.error) as e:
        raise ContainerRefused(f"a damaged Outlook .msg file: {e}") from e
    finally:
        ole.close()


def _message(ole: OleFileIO, at: list[str], depth: int) -> EmailMessage:
    msg = EmailMessage()
    headers = _text(ole, at, _HEADERS) or ""
    original = _original_headers(headers)
    sender = _sender(ole, at) or original.get("from")
    if sender:
        msg["From"] = sender
    to = _recipients(ole, at) or _text(ole, at, _DISPLAY_TO) or original.get("to")
    if to:
        msg["To"] = to
    cc = _text(ole, at, _DISPLAY_CC) or original.get("cc")
    if cc:
        msg["Cc"] = cc
    when = original.get("date") or _date(ole, at)
    if when:
        msg["Date"] = when
    msg["Subject"] = _text(ole, at, _SUBJECT) or original.get("subject") or "(no subject)"
    message_id = _text(ole, at, _MESSAGE_ID) or original.get("message-id")
    if message_id:
        msg["Message-ID"] = message_id
    body = _text(ole, at, _BODY)
    html = _text(ole, at, _HTML) or _decode_html(_binary(ole, at, _HTML))
    if body and body.strip():
        msg.set_content(body)
    elif html:
        msg.set_content(html, subtype="html")
    else:
        msg.set_content("")
    for storage in _children(ole, at, "__attach_version1.0_#"):
        _attach(ole, [*at, storage], msg, depth)
    return msg


def _attach(ole: OleFileIO, at: list[str], msg: EmailMessage, depth: int) -> None:
    name = (
        _text(ole, at, _ATTACH_LONG_NAME)
        or _text(ole, at, _ATTACH_NAME)
        or _text(ole, at, _ATTACH_DISPLAY_NAME)
        or ""
    )
    name = PurePosixPath(name.replace("\\", "/")).name.strip()
    embedded = [*at, f"__substg1.0_{_ATTACH_DATA}000D"]
    if ole.exists("/".join(embedded)):
        if depth + 1 > MAX_EMBEDDED_DEPTH:
            raise ContainerRefused(
                f"messages attached to messages over {MAX_EMBEDDED_DEPTH} deep; not read"
            )
        inner = _message(ole, embedded, depth + 1)
        # rewritten as RFC 822 like its parent, so it is read as an .eml
        eml = f"{PurePosixPath(name).stem}.eml" if name else None
        msg.add_attachment(inner, filename=eml)
        return
    data = _binary(ole, at, _ATTACH_DATA)
    if data is None:  # an OLE object or a link: nothing to read
        return
    mime = (_text(ole, at, _ATTACH_MIME) or "application/octet-stream").strip().lower()
    maintype, _, subtype = mime.partition("/")
    if not subtype or maintype in ("message", "multipart"):
        maintype, subtype = "application", "octet-stream"
    msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name or None)


def _stream(ole: OleFileIO, path: list[str]) -> bytes | None:
    joined = "/".join(path)
    if not ole.exists(joined) or ole.get_type(joined) != 2:  # 2: a stream
        return None
    return bytes(ole.openstream(joined).read())


def _text(ole: OleFileIO, at: list[str], prop: str) -> str | None:
    raw = _stream(ole, [*at, f"__substg1.0_{prop}001F"])
    if raw is not None:
        return raw.decode("utf-16-le", errors="replace").rstrip("\x00")
    raw = _stream(ole, [*at, f"__substg1.0_{prop}001E"])
    if raw is not None:
        return raw.decode("cp1252", errors="replace").rstrip("\x00")
    return None


def _binary(ole: OleFileIO, at: list[str], prop: str) -> bytes | None:
    return _stream(ole, [*at, f"__substg1.0_{prop}0102"])


def _decode_html(raw: bytes | None) -> str | None:
    if not raw:
        return None
    return raw.decode("utf-8", errors="replace").rstrip("\x00")


def _children(ole: OleFileIO, at: list[str], prefix: str) -> list[str]:
    names = {
        e[len(at)]
        for e in ole.listdir(streams=False, storages=True)
        if len(e) > len(at) and e[: len(at)] == at
    }
    return sorted(n for n in names if n.startswith(prefix))


def _sender(ole: OleFileIO, at: list[str]) -> str | None:
    name = _text(ole, at, _SENDER_NAME)
    address = next((a for p in _SENDER_EMAIL if (a := _text(ole, at, p)) and "@" in a), None)
    if address:
        return f"{name} <{address}>" if name and name != address else address
    return name


def _recipients(ole: OleFileIO, at: list[str]) -> str | None:
    out = []
    for storage in _children(ole, at, "__recip_version1.0_#"):
        here = [*at, storage]
        address = next((a for p in _RECIPIENT_EMAIL if (a := _text(ole, here, p)) and "@" in a), "")
        name = _text(ole, here, _RECIPIENT_NAME)
        if address:
            out.append(f"{name} <{address}>" if name and name != address else address)
    return ", ".join(out) or None


def _original_headers(block: str) -> dict[str, str]:
    """The transport headers Outlook kept (PR_TRANSPORT_MESSAGE_HEADERS), lower-cased names."""
    found: dict[str, str] = {}
    name = None
    for line in block.splitlines():
        if line[:1] in (" ", "\t") and name:
            found[name] += " " + line.strip()
        elif ":" in line:
            key, _, value = line.partition(":")
            name = key.strip().lower()
            if name not in found:
                found[name] = value.strip()
            else:
                name = None
    return found


def _date(ole: OleFileIO, at: list[str]) -> str | None:
    """The submit (else delivery) time from the fixed-size property stream, as an RFC 822 date."""
    raw = _stream(ole, [*at, "__properties_version1.0"])
    if raw is None:
        return None
    header = 32 if not at else 24  # the top-level message's header is longer than an embedded one's
    times: dict[int, int] = {}
    for off in range(header, len(raw) - 15, 16):
        tag, _flags, value = struct.unpack_from("<IIQ", raw, off)
        if tag & 0xFFFF == _PT_SYSTIME:
            times[tag >> 16] = value
    ticks = times.get(_SUBMIT_TIME) or times.get(_DELIVERY_TIME)
    if not ticks:
        return None
    try:
        when = datetime(1601, 1, 1, tzinfo=UTC) + timedelta(microseconds=ticks // 10)
    except OverflowError:
        return None
    return format_datetime(when)
