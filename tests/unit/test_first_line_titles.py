"""A plain-text file's first line is its title only when it names the file.

Found on the thirteenth real folder (BENCHMARKS.md): mawk's README was titled by the revision
control keyword it opens with ("-- $MawkId: README,v 1.6 2019/01/29 02:05:45 tom Exp $", then
vile's mode line "-- vile:txtmode fc=78"); the tz database's ``leap-seconds.list`` and
``/etc/nsswitch.conf`` by their first comment with its mark ("# ATOMIC TIME", "#
/etc/nsswitch.conf"); systemd's ``README.logs``, OpenIPMI's README and a PDF made from
util-linux's ``deprecated.txt`` by a first line of prose cut where the text wraps ("You are
looking for the traditional text log files in /var/log, and they are"); and login's
``NEWS.Debian``, named with its package before it, by its newest release's heading ("shadow
(1:4.11.1+dfsg1-0exp1) experimental; urgency=medium"). Every file is copied unchanged from this
machine (``/usr/share/doc``, ``/etc``, ``/usr/share/zoneinfo``; the PDF is LibreOffice's
conversion of ``/usr/share/doc/util-linux/deprecated.txt``; GnuPG's ``HACKING`` and Zutty's
``README.org``, Org documents, are ``/usr/share/doc/gnupg/HACKING.gz`` (GPL-3+) and
``/usr/share/doc/zutty/README.org.gz`` (GPL-3+) as Debian ships them)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import expand_inputs

DATA = Path(__file__).parents[1] / "data" / "first_lines"


def _title(source: str, folder: str, name: str, tmp_path: Path, data: Path = DATA) -> str:
    path = tmp_path / folder / name
    path.parent.mkdir()
    if name.endswith(".gz"):  # read as ingestion reads it: its content, named without ".gz"
        path = path.with_suffix("")
        path.write_bytes(gzip.decompress((data / source).read_bytes()))
    else:
        shutil.copy(data / source, path)
    (found,) = expand_inputs([str(path)]).items
    return parse(found, 10_000_000).title


@pytest.mark.parametrize(
    ("source", "folder", "name", "title"),
    [
        # a revision control keyword and vile's mode line are passed over
        ("mawk-README", "mawk", "README", "mawk -- an implementation of new/posix awk"),
        ("mhash-README", "libmhash2", "README", "mhash README"),
        # a comment's mark is not a word of the title
        ("leap-seconds.list", "zoneinfo", "leap-seconds.list", "ATOMIC TIME"),
        ("nsswitch.conf", "etc", "nsswitch.conf", "/etc/nsswitch.conf"),
        # a line of prose wrapped at the text's width is no title: the file's name is
        ("README.logs", "systemd", "README.logs", "README.logs (systemd)"),
        ("deprecated utilities.pdf", "office", "deprecated utilities.pdf", "deprecated utilities"),
        # wrapped prose first, beside fakeroot's README: the name keeps its own extension
        ("README.saving", "fakeroot", "README.saving", "README.saving (fakeroot)"),
        # a release log with its package's name before it: its first line heads a release
        ("login NEWS.Debian.gz", "accounts", "login NEWS.Debian.gz", "login NEWS"),
        # an Org document's #+TITLE keyword, after the comments and mode line that open it
        # (found on the fourteenth real folder; they were "HACKING" and "#+TITLE: Zutty - ...")
        ("gnupg HACKING.gz", "gnupg", "HACKING.gz", "A Hacker's Guide to GnuPG"),
        ("zutty-README.org.gz", "zutty", "README.org.gz", "Zutty - Zero-cost Unicode Teletype"),
    ],
)
def test_the_first_line_names_the_file_or_the_file_name_does(
    source: str, folder: str, name: str, title: str, tmp_path: Path
) -> None:
    assert _title(source, folder, name, tmp_path) == title


@pytest.mark.parametrize(
    ("source", "folder", "name", "title"),
    [
        # "#", "#", "#" then "PROGRAMS = \": a comment with no words, then code
        ("Makefile", "examples", "Makefile", "Makefile"),
        # "# vim:set ft=sh sw=2 sts=2 et:" then the script's first statement
        ("20dbus_xdg-runtime", "Xsession.d", "20dbus_xdg-runtime", "20dbus xdg-runtime"),
        # "#" then a sentence: no title, as before
        ("login.defs", "etc", "login.defs", "login"),
        # "# manpath.config": the file's own name, the file title without its extension
        ("manpath.config", "etc", "manpath.config", "manpath"),
    ],
)
def test_code_after_a_comment_with_no_words_is_no_title(
    source: str, folder: str, name: str, title: str, tmp_path: Path
) -> None:
    assert _title(source, folder, name, tmp_path) == title


def test_the_text_keeps_every_line(tmp_path: Path) -> None:
    path = tmp_path / "mawk" / "README"
    path.parent.mkdir()
    shutil.copy(DATA / "mawk-README", path)
    (found,) = expand_inputs([str(path)]).items
    text = parse(found, 10_000_000).pages[0].text
    assert "$MawkId: README,v 1.6" in text and "vile:txtmode" in text


def test_a_short_title_over_a_lower_case_line_stays(tmp_path: Path) -> None:
    """mawk's title is followed by "version 1.3.4": a short line is not wrapped prose."""
    path = tmp_path / "notes.txt"
    path.write_text("Disk quotas\nversion 2\n\nHow to set them.\n")
    (found,) = expand_inputs([str(path)]).items
    assert parse(found, 10_000_000).title == "Disk quotas"


SEVENTEENTH = Path(__file__).parents[1] / "data" / "seventeenth_folder"


@pytest.mark.parametrize(
    ("source", "folder", "name", "title"),
    [
        # a badge after the heading's words: its alt text ("test") is no word of the title
        ("pkgconf README.md.gz", "pkgconf-bin", "README.md.gz", "pkgconf"),
        # a setting is no title: the file's name is ("config_version = \"1\"" before)
        ("multirust-config.toml", "rustlib", "multirust-config.toml", "multirust-config"),
        # a mailbox's "From " line names a sender and a date, not the text
        ("readline USAGE", "libreadline8", "USAGE", "USAGE"),
    ],
)
def test_a_badge_a_setting_or_a_sender_is_no_title(
    source: str, folder: str, name: str, title: str, tmp_path: Path
) -> None:
    assert _title(source, folder, name, tmp_path, SEVENTEENTH) == title
