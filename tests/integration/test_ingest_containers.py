"""Archives, compressed files, e-mail, reStructuredText, AsciiDoc and extension-less text, on both
engines (issue 24): every member of an archive or message is a document named
``container!member`` and linked to its container (``CONTAINED_IN``; an attachment ``ATTACHED_TO``
its message), so answers cite ``docs.zip!guide/NOTES``; an unchanged archive is skipped, a
changed one replaces its members; bombs, corrupt archives, path-traversal names and a message
that is not one fail by name while the rest of the folder lands. The fixtures are made by
scripts/make_container_fixtures.py with the standard library's writers, plus real Debian files."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.graph.store import GraphStore
from kgrag.modalities import factory

DATA = Path(__file__).resolve().parent.parent / "data" / "containers"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("containers") / "good"
    shutil.copytree(DATA / "good", target)
    return target


@pytest.fixture(scope="module")
def agent(module_store: GraphStore, folder: Path) -> KnowledgeAgent:
    return KnowledgeAgent(module_store, factory.text_embedder(Settings()))


@pytest.fixture(scope="module")
def first_report(agent: KnowledgeAgent, folder: Path):  # type: ignore[no-untyped-def]
    return agent.ingest([str(folder)])


def _names(folder: Path, uris: list[str]) -> set[str]:
    return {u.removeprefix(str(folder) + "/") for u in uris}


def _documents(store: GraphStore, folder: Path) -> dict[str, str]:
    rows = store.read_freeform(
        "MATCH (d:Document) WHERE d.uri STARTS WITH $root AND d.status = 'complete' "
        "RETURN d.uri AS uri, d.title AS title",
        {"root": str(folder) + "/"},
    )
    return {r["uri"].removeprefix(str(folder) + "/"): r["title"] for r in rows}


def _links(store: GraphStore, folder: Path) -> set[tuple[str, str, str]]:
    rows = store.read_freeform(
        "MATCH (m:Document)-[r:CONTAINED_IN|ATTACHED_TO]->(c:Document) "
        "WHERE c.uri STARTS WITH $root "
        "RETURN m.uri AS member, type(r) AS rel, c.uri AS container",
        {"root": str(folder) + "/"},
    )
    cut = len(str(folder)) + 1
    return {(r["member"][cut:], r["rel"], r["container"][cut:]) for r in rows}


def test_every_member_is_a_document_linked_to_its_container(
    first_report, agent: KnowledgeAgent, folder: Path
) -> None:  # type: ignore[no-untyped-def]
    assert first_report.failed == 0, first_report.failures
    skips = {s.path.removeprefix(str(folder) + "/"): s.kind for s in first_report.skips}
    assert skips == {"docs.zip!bin/tool.exe": "unsupported_type"}
    docs = _documents(agent.store, folder)
    assert set(docs) == {
        "README",
        "compressor.adoc",
        "turbine.rst",
        "notes.txt.gz",
        "debian/README.Debian",
        "debian/copyright",
        "debian/changelog.Debian.gz",
        "docs.zip",
        "docs.zip!guide/intro.md",
        "docs.zip!guide/NOTES",
        "docs.zip!data/levels.csv",
        "forms.tar",
        "forms.tar!forms/leave.txt",
        "manuals.tar.gz",
        "manuals.tar.gz!manuals/conveyor.txt",
        "manuals.tar.gz!manuals/changelog",
        "inspection.eml",
        "inspection.eml!b7-report.txt",
        "inspection.eml!spares.md",
        "shift.mbox",
        "shift.mbox!message-1.eml",
        "shift.mbox!message-2.eml",
    }
    assert first_report.ingested == len(docs)
    assert (
        docs["inspection.eml"] == "Boiler B-7 inspection results (Fri, 01 Mar 2024 09:30:00 +0000)"
    )
    assert docs["turbine.rst"] == "Turbine T-9 operating guide"
    assert docs["compressor.adoc"] == "Compressor K-5 handbook"
    assert docs["debian/README.Debian"] == "README for psmisc"
    assert _links(agent.store, folder) == {
        ("docs.zip!guide/intro.md", "CONTAINED_IN", "docs.zip"),
        ("docs.zip!guide/NOTES", "CONTAINED_IN", "docs.zip"),
        ("docs.zip!data/levels.csv", "CONTAINED_IN", "docs.zip"),
        ("forms.tar!forms/leave.txt", "CONTAINED_IN", "forms.tar"),
        ("manuals.tar.gz!manuals/conveyor.txt", "CONTAINED_IN", "manuals.tar.gz"),
        ("manuals.tar.gz!manuals/changelog", "CONTAINED_IN", "manuals.tar.gz"),
        ("inspection.eml!b7-report.txt", "ATTACHED_TO", "inspection.eml"),
        ("inspection.eml!spares.md", "ATTACHED_TO", "inspection.eml"),
        ("shift.mbox!message-1.eml", "CONTAINED_IN", "shift.mbox"),
        ("shift.mbox!message-2.eml", "CONTAINED_IN", "shift.mbox"),
    }
    # the message's headers are its tags; what reStructuredText would have included is not there
    tags = agent.store.read_freeform(
        "MATCH (d:Document {uri: $uri}) RETURN d.tags AS tags", {"uri": f"{folder}/inspection.eml"}
    )[0]["tags"]
    assert {"from:ada@example.org", "to:team@example.org", "date:2024-03-01"} <= set(tags)
    leaked = agent.store.read_freeform(
        "MATCH (c:Chunk) WHERE c.text CONTAINS 'root:' OR c.text CONTAINS 'alert(' "
        "RETURN count(c) AS n"
    )
    assert leaked[0]["n"] == 0


@pytest.mark.parametrize(
    ("question", "expected", "cited"),
    [
        ("What is the seal kit number of pump P-12?", "SK-208", "docs.zip!guide/NOTES"),
        ("How fast does conveyor belt CB-4 run?", "1.2", "manuals.tar.gz!manuals/conveyor.txt"),
        ("When must the gasket GK-4471 be replaced?", "15 March", "inspection.eml!b7-report.txt"),
        ("Where are the Forklift FL-6 batteries charged?", "bay 9", "notes.txt.gz"),
        ("What is the vibration limit of turbine T-9?", "4.5", "turbine.rst"),
    ],
)
def test_answers_cite_the_member_inside_its_container(
    first_report, agent: KnowledgeAgent, folder: Path, question: str, expected: str, cited: str
) -> None:  # type: ignore[no-untyped-def]
    answer = agent.ask(question)
    assert expected in answer.answer, answer.answer
    uris = [c.uri for c in answer.citations if c.uri]
    assert f"{folder}/{cited}" in uris, uris


def test_an_unchanged_archive_is_skipped_and_a_changed_one_replaces_its_members(
    agent: KnowledgeAgent, tmp_path: Path
) -> None:
    folder = tmp_path / "box"
    folder.mkdir()
    archive = folder / "kit.zip"

    def write(members: dict[str, str]) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
            for name, text in members.items():
                z.writestr(name, text)
        archive.write_bytes(buffer.getvalue())

    write({"a.txt": "Valve V-1 is blue.\n", "b.txt": "Valve V-2 is green.\n"})
    assert agent.ingest([str(folder)]).ingested == 3
    again = agent.ingest([str(folder)])
    assert again.ingested == 0 and again.failed == 0
    assert {s.kind for s in again.skips} == {"unchanged"} and again.skipped == 3

    write({"a.txt": "Valve V-1 is blue.\n", "c.txt": "Valve V-3 is red.\n"})
    changed = agent.ingest([str(folder)])
    assert changed.failed == 0 and changed.ingested == 2  # the archive and c.txt
    assert _documents(agent.store, folder).keys() == {"kit.zip", "kit.zip!a.txt", "kit.zip!c.txt"}
    count = agent.store.read_freeform(
        "MATCH (d:Document) WHERE d.uri STARTS WITH $root RETURN count(d) AS n",
        {"root": str(folder)},
    )
    assert count[0]["n"] == 3  # no second version of anything, b.txt gone
    # the unchanged member is linked to the archive's new version
    assert _links(agent.store, folder) == {
        ("kit.zip!a.txt", "CONTAINED_IN", "kit.zip"),
        ("kit.zip!c.txt", "CONTAINED_IN", "kit.zip"),
    }
    answer = agent.ask("What colour is valve V-2?")
    assert not any(c.uri and c.uri.endswith("kit.zip!b.txt") for c in answer.citations)
    # deleting the archive deletes its members
    (archive_id,) = [
        r["id"]
        for r in agent.store.read_freeform(
            "MATCH (d:Document {uri: $uri}) RETURN d.id AS id", {"uri": str(archive)}
        )
    ]
    agent.delete(archive_id)
    assert _documents(agent.store, folder) == {}


def test_bad_containers_fail_by_name_and_the_rest_lands(
    agent: KnowledgeAgent, tmp_path: Path
) -> None:
    folder = tmp_path / "bad"
    shutil.copytree(DATA / "bad", folder)
    (folder / "fine.txt").write_text("The fine file of the bad folder names pump P-99.\n")
    report = agent.ingest([str(folder)])
    reasons = {f.path.removeprefix(str(folder) + "/"): f.reason for f in report.failures}
    assert set(reasons) == {
        "bomb.zip!zeros.txt",
        "bomb.txt.gz",
        "corrupt.zip",
        "truncated.tar.gz",
        "garbage.eml",
        "nested.zip!level2.zip!level3.zip!level4.zip",
        "traversal.zip!../escape.txt",
        "traversal.zip!/etc/cron.d/evil",
        "traversal.tar!../../escape.txt",
    }, reasons
    assert "zip bomb" in reasons["bomb.zip!zeros.txt"]
    assert "gzip bomb" in reasons["bomb.txt.gz"]
    assert reasons["corrupt.zip"].startswith("corrupt or unreadable zip archive")
    assert "truncated" in reasons["truncated.tar.gz"]
    assert reasons["garbage.eml"].startswith("not an e-mail message")
    assert "nested over 3 deep" in reasons["nested.zip!level2.zip!level3.zip!level4.zip"]
    assert "path traversal" in reasons["traversal.zip!../escape.txt"]
    assert "path traversal" in reasons["traversal.zip!/etc/cron.d/evil"]
    landed = _documents(agent.store, folder)
    assert {
        "fine.txt",
        "traversal.zip!safe.txt",
        "traversal.tar!ok.txt",
        "nested.zip!level2.zip!level3.zip!level3.txt",
    } <= set(landed)
    assert not any(n.startswith(("corrupt.zip", "garbage.eml", "bomb.txt.gz")) for n in landed)
    assert not (tmp_path / "escape.txt").exists() and not (folder / "escape.txt").exists()


def test_empty_files_and_duplicates_are_skips_naming_why(
    agent: KnowledgeAgent, tmp_path: Path
) -> None:
    folder = tmp_path / "skips"
    folder.mkdir()
    (folder / "empty.txt").write_bytes(b"")
    (folder / "BLANK").write_text("  \n\t\n")
    (folder / "original.md").write_text("# Crane\n\nCrane CR-8 lifts 12 tonnes.\n")
    (folder / "copy.md").write_text("# Crane\n\nCrane CR-8 lifts 12 tonnes.\n")
    report = agent.ingest([str(folder)])
    assert (report.ingested, report.failed) == (1, 0), report.failures
    kinds = {Path(s.path).name: (s.kind, s.detail) for s in report.skips}
    assert kinds["empty.txt"][0] == "empty" and kinds["BLANK"][0] == "empty"
    # copy.md sorts first, so it is the one ingested; original.md names it
    assert kinds["original.md"] == (
        "duplicate",
        f"same content and ACL as {folder}/copy.md, already ingested",
    )
    # named alone, an empty file is a skip too, not a failure
    alone = agent.ingest([str(folder / "empty.txt")])
    assert alone.failed == 0 and [s.kind for s in alone.skips] == ["empty"]


def test_a_file_holding_the_old_content_of_a_file_changed_in_the_same_job_is_stored(
    agent: KnowledgeAgent, tmp_path: Path
) -> None:
    """A kept file edited while its old text was saved under another name, both ingested in one
    job: the other file was skipped as a copy of the kept one, whose old version the same job
    replaced, so its text was stored nowhere. Now it is a document of its own."""
    folder = tmp_path / "edits"
    folder.mkdir()
    old = "Pump P-14 was serviced on 3 May; the seals were replaced.\n"
    (folder / "pump-log.txt").write_text(old)
    assert agent.ingest([str(folder)]).ingested == 1
    (folder / "pump-log.txt").write_text("Pump P-14 is due for service on 9 June.\n")
    (folder / "pump-log-may.txt").write_text(old)
    report = agent.ingest([str(folder)])
    assert (report.ingested, report.failed) == (2, 0), (report.skips, report.failures)
    assert not [s for s in report.skips if s.kind == "duplicate"], report.skips
    found = agent.ask("When was pump P-14 serviced and what was replaced?", admin=True)
    assert "seals were replaced" in found.answer, found.answer
    assert any(c.uri == str(folder / "pump-log-may.txt") for c in found.citations), found.answer


def test_members_are_readable_by_whom_their_container_is(
    agent: KnowledgeAgent, tmp_path: Path
) -> None:
    archive = tmp_path / "payroll.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("salaries.txt", "The salary of Quirinus Blackwood is 91234 euros.\n")
    report = agent.ingest([str(archive)], acl=["user:alice"])
    assert (report.ingested, report.failed) == (2, 0), report.failures
    question = "What is the salary of Quirinus Blackwood?"
    bob = agent.ask(question, user="bob")
    assert "91234" not in bob.answer
    assert not any(c.uri and "payroll.zip" in c.uri for c in bob.citations)
    alice = agent.ask(question, user="alice")
    assert "91234" in alice.answer, alice.answer
    assert any(c.uri == f"{archive}!salaries.txt" for c in alice.citations)


OUTLOOK = DATA.parent / "outlook"


def test_an_outlook_message_is_read_like_an_eml_and_a_damaged_one_fails_by_name(
    agent: KnowledgeAgent, tmp_path: Path
) -> None:
    """A real Outlook .msg (tests/data/outlook/SOURCE.md): its headers, body and the message
    attached to it land as an .eml would; a truncated copy and a text file named .msg fail by
    name, and the good message is still ingested."""
    folder = tmp_path / "outlook"
    folder.mkdir()
    real = (OUTLOOK / "outer.msg").read_bytes()
    (folder / "outer.msg").write_bytes(real)
    (folder / "truncated.msg").write_bytes(real[:20_000])
    (folder / "plain.msg").write_text("Subject: not Outlook\n\nA text file saved as .msg.\n")
    report = agent.ingest([str(folder)])
    reasons = {f.path.removeprefix(str(folder) + "/"): f.reason for f in report.failures}
    assert set(reasons) == {"truncated.msg", "plain.msg"}, reasons
    assert reasons["truncated.msg"].startswith("not a readable Outlook .msg file (truncated")
    assert reasons["plain.msg"].startswith("not an Outlook .msg file")
    docs = _documents(agent.store, folder)
    assert docs == {
        "outer.msg": "outer subject (Tue, 15 Nov 2016 23:29:05 +0000)",
        "outer.msg!test.eml": "test (Tue, 15 Nov 2016 23:28:26 +0000)",
    }
    assert _links(agent.store, folder) == {("outer.msg!test.eml", "ATTACHED_TO", "outer.msg")}
    row = agent.store.read_freeform(
        "MATCH (d:Document {uri: $uri}) RETURN d.tags AS tags, d.mime AS mime",
        {"uri": f"{folder}/outer.msg"},
    )[0]
    assert {"to:outer@foo.bar", "date:2016-11-15"} <= set(row["tags"])
    assert row["mime"] == "application/vnd.ms-outlook"
    text = agent.store.read_freeform(
        "MATCH (c:Chunk)-[:PART_OF]->(d:Document {uri: $uri}) RETURN c.text AS text",
        {"uri": f"{folder}/outer.msg"},
    )
    assert any("Outer body" in r["text"] for r in text), text
