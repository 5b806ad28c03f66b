"""Outlook .msg files rewritten as RFC 822 (kgrag/ingest/containers/_outlook.py), on a real message
saved by Outlook (tests/data/outlook/SOURCE.md) and on damaged copies of it."""

from __future__ import annotations

from pathlib import Path

import olefile
import pytest

from kgrag.ingest.containers._outlook import msg_to_rfc822
from kgrag.ingest.containers.limits import ContainerRefused
from kgrag.ingest.containers.mail import read_message

REAL = Path(__file__).resolve().parent.parent / "data" / "outlook" / "outer.msg"


def test_a_real_message_keeps_its_headers_body_and_embedded_message() -> None:
    message = read_message(msg_to_rfc822(REAL.read_bytes()))
    assert message.subject == "outer subject"
    assert message.day == "2016-11-15"
    assert message.recipients == ("outer@foo.bar",)
    assert "Outer body" in message.text
    (attached,) = message.attachments
    assert attached.name == "test.eml"  # an embedded Outlook message, rewritten as RFC 822
    inner = read_message(attached.data)
    assert (inner.subject, inner.recipients) == ("test", ("test@foobar.com",))
    assert "body" in inner.text


@pytest.mark.parametrize("cut", [512, 4096, 30_000])
def test_a_truncated_message_is_refused(cut: int) -> None:
    with pytest.raises(ContainerRefused, match=r"not a readable Outlook \.msg file"):
        msg_to_rfc822(REAL.read_bytes()[:cut])


def test_text_named_msg_is_refused_before_parsing() -> None:
    with pytest.raises(ContainerRefused, match="no OLE compound file signature"):
        msg_to_rfc822(b"Subject: hello\n\nnot an Outlook file\n")


def test_an_ole_file_that_is_not_a_message_is_refused(tmp_path: Path) -> None:
    # a real OLE file without MAPI properties: the message's own storage is renamed away
    data = bytearray(REAL.read_bytes())
    name = "__properties_version1.0".encode("utf-16-le")
    at = data.find(name)
    while at >= 0:  # every storage's property stream, so nothing is a message any more
        data[at : at + 2] = "X".encode("utf-16-le")
        at = data.find(name, at + 2)
    assert olefile.isOleFile(bytes(data))
    with pytest.raises(ContainerRefused, match="not an Outlook message"):
        msg_to_rfc822(bytes(data))
