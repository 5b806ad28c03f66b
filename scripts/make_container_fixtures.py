"""Make the container and plain-text fixtures of tests/data/containers with the standard library's
own writers (zipfile, tarfile, gzip, email, mailbox), so every archive and message is one a real
tool wrote. Run: ``python scripts/make_container_fixtures.py`` (rewrites the folder's outputs).

``good/`` holds what must be ingested: a zip, a tar.gz and a tar with members of several types,
an e-mail with two attachments, a mailbox of two messages, reStructuredText, AsciiDoc and
extension-less text. ``good/debian/`` holds real files copied from Debian's psmisc package
(README.Debian, copyright, changelog.Debian.gz). ``bad/`` holds what must fail by name: a zip
bomb, a gzip bomb, archives nested five deep, a truncated zip and tar.gz, members with
path-traversal names, and a file named .eml that is not a message. No .msg file is made: no
tool on this machine writes Outlook's format.
"""

from __future__ import annotations

import gzip
import io
import mailbox
import shutil
import tarfile
import time
import zipfile
from email.message import EmailMessage
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "tests" / "data" / "containers"
#: Fixed times so the outputs are the same bytes on every run.
EPOCH = (2024, 3, 1, 12, 0, 0)
MTIME = 1709294400


def _zip(path: Path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=EPOCH), data, zipfile.ZIP_DEFLATED)


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=EPOCH), data, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _tar(path: Path, members: dict[str, bytes], mode: str) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), MTIME, 0o644
            archive.addfile(info, io.BytesIO(data))
    payload = raw.getvalue()
    if mode == "gz":
        payload = gzip.compress(payload, mtime=0)
    path.write_bytes(payload)


def _message() -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Ada Lovelace <ada@example.org>"
    msg["To"] = "Maintenance Team <team@example.org>"
    msg["Date"] = "Fri, 01 Mar 2024 09:30:00 +0000"
    msg["Subject"] = "Boiler B-7 inspection results"
    msg["Message-ID"] = "<b7-inspection@example.org>"
    msg.set_content(
        "Hello team,\n\nThe inspection of boiler B-7 found a cracked gasket on the feed valve.\n"
        "The replacement gasket is part GK-4471; the full report is attached.\n\nAda\n"
    )
    msg.add_attachment(
        b"Inspection report for boiler B-7\n\nThe feed valve gasket GK-4471 is cracked and must "
        b"be replaced before 15 March 2024. Pressure test passed at 12 bar.\n",
        maintype="text",
        subtype="plain",
        filename="b7-report.txt",
    )
    msg.add_attachment(
        b"# Spare parts\n\nThe storeroom keeps three GK-4471 gaskets on shelf S-12.\n",
        maintype="text",
        subtype="markdown",
        filename="spares.md",
    )
    msg.set_boundary("==kgrag-fixture-boundary==")
    return msg


def _mailbox(path: Path) -> None:
    path.unlink(missing_ok=True)
    box = mailbox.mbox(path)
    for n, (subject, body) in enumerate(
        [
            ("Night shift handover", "The chiller C-3 alarm was reset at 02:10 by Grace.\n"),
            ("Canteen menu", "From Monday the canteen serves lentil soup on Tuesdays.\n"),
        ],
        start=1,
    ):
        msg = EmailMessage()
        msg["From"] = f"operator{n}@example.org"
        msg["To"] = "plant@example.org"
        msg["Date"] = f"Mon, 0{n} Apr 2024 07:00:00 +0000"
        msg["Subject"] = subject
        msg.set_content(body)
        entry = mailbox.mboxMessage(msg)
        entry.set_from("MAILER-DAEMON", time.gmtime(MTIME))
        box.add(entry)
    box.flush()
    box.close()


RST = """\
Turbine T-9 operating guide
===========================

Start-up
--------

1. Open the lubrication valve **LV-2** before spinning the shaft.
2. Wait until the oil pressure reads 1.8 bar.

.. note:: The vibration limit of turbine T-9 is 4.5 mm/s.

.. include:: /etc/passwd

.. raw:: html

   <script>alert('raw html is never passed through')</script>

+-----------+----------+
| Check     | Interval |
+===========+==========+
| Bearings  | 500 h    |
+-----------+----------+
"""

ADOC = """\
= Compressor K-5 handbook
:author: Plant engineering
:toc:

// internal note: not content

== Filters

The intake filter of compressor K-5 is changed every *2000 hours*.
See link:https://example.org/k5[the vendor page].

.Service intervals
|===
|Part |Interval
|Intake filter |2000 h
|Oil separator |4000 h
|===

include::secrets.adoc[]
"""


def main() -> None:
    good, bad = ROOT / "good", ROOT / "bad"
    for folder in (good, bad):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)

    _zip(
        good / "docs.zip",
        {
            "guide/intro.md": b"# Pump P-12\n\nThe pump P-12 impeller is made of duplex steel.\n",
            "guide/NOTES": b"Pump P-12 notes: the seal kit number is SK-208.\n",
            "data/levels.csv": b"Tank,Level\nT-1,71\nT-2,38\n",
            "bin/tool.exe": b"MZ\x90\x00\x03\x00\x00\x00binary",
        },
    )
    _tar(
        good / "manuals.tar.gz",
        {
            "manuals/conveyor.txt": b"Conveyor belt CB-4 runs at 1.2 metres per second.\n",
            "manuals/changelog": b"2024-02-01: conveyor CB-4 belt tension raised to 8 kN.\n",
        },
        "gz",
    )
    _tar(good / "forms.tar", {"forms/leave.txt": b"Leave requests go to the shift lead.\n"}, "")
    (good / "inspection.eml").write_bytes(_message().as_bytes())
    _mailbox(good / "shift.mbox")
    (good / "turbine.rst").write_text(RST, encoding="utf-8")
    (good / "compressor.adoc").write_text(ADOC, encoding="utf-8")
    (good / "README").write_text(
        "Plant wiki export.\n\nThe emergency stop of line L-2 is the red button at gate 4.\n",
        encoding="utf-8",
    )
    (good / "notes.txt.gz").write_bytes(
        gzip.compress(b"Forklift FL-6 batteries are charged in bay 9.\n", mtime=0)
    )
    debian = good / "debian"
    debian.mkdir()
    for name in ("README.Debian", "copyright", "changelog.Debian.gz"):
        shutil.copyfile(Path("/usr/share/doc/psmisc") / name, debian / name)

    # a zip bomb: 50 MB of zeros deflated to ~50 KB (ratio ~1000:1)
    with zipfile.ZipFile(bad / "bomb.zip", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr(zipfile.ZipInfo("zeros.txt", date_time=EPOCH), b"\0" * 50_000_000, 8)
    (bad / "bomb.txt.gz").write_bytes(gzip.compress(b" " * 50_000_000, compresslevel=9, mtime=0))
    # archives in archives, five deep: the innermost two are beyond the depth limit
    inner = _zip_bytes({"deep.txt": b"Found at the bottom of five archives.\n"})
    for level in range(4, 0, -1):
        inner = _zip_bytes(
            {f"level{level + 1}.zip": inner, f"level{level}.txt": f"Level {level}.\n".encode()}
        )
    (bad / "nested.zip").write_bytes(inner)
    whole = _zip_bytes({"a.txt": b"alpha " * 200, "b.txt": b"beta " * 200})
    (bad / "corrupt.zip").write_bytes(whole[: len(whole) // 2])
    _tar(bad / "truncated.tar.gz", {"t.txt": bytes(range(256)) * 400}, "gz")
    data = (bad / "truncated.tar.gz").read_bytes()
    (bad / "truncated.tar.gz").write_bytes(data[: len(data) // 2])
    _zip(
        bad / "traversal.zip",
        {
            "../escape.txt": b"written outside the folder, if extracted\n",
            "/etc/cron.d/evil": b"absolute path\n",
            "safe.txt": b"The safe member of the traversal archive names valve V-77.\n",
        },
    )
    _tar(bad / "traversal.tar", {"../../escape.txt": b"climbs out\n", "ok.txt": b"fine\n"}, "")
    (bad / "garbage.eml").write_bytes(bytes(range(256)) * 4)
    print(f"wrote fixtures under {ROOT}")


if __name__ == "__main__":
    main()
