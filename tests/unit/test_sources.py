"""expand_inputs over real files, folders, globs, symlinks and JSONL manifests in tmp_path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kgrag.errors import IngestError, InvalidAclError
from kgrag.ingest.formats import libreoffice
from kgrag.ingest.models import ExpandedInputs, UnsupportedInput
from kgrag.ingest.sources import FILE_TYPES, expand_inputs


def touch(path: Path, content: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


XYZ_REFUSED = (
    "unsupported file type '.xyz' and not text (binary, minified: a line over 4,096 "
    "characters that is not JSON, or PostScript or RTF) (supported: "
)
#: The first bytes of a real gzip stream: binary, so no file type kgrag reads.
BINARY = bytes.fromhex("1f8b0800000000000003") + bytes(range(256))


def touch_binary(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(BINARY)
    return path


def reasons(result: ExpandedInputs) -> dict[str, str]:
    return {r.path: r.reason for r in result.rejected}


def only_rejection(result: ExpandedInputs) -> UnsupportedInput:
    assert len(result.rejected) == 1, result.rejected
    return result.rejected[0]


def test_folder_is_walked_recursively_sorted_and_skips_hidden(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    touch(docs / "b.md")
    touch(docs / "a.txt")
    touch(docs / "sub" / "c.pdf")
    touch(docs / "sub" / "deeper" / "d.png")
    touch(docs / ".hidden.txt")
    touch(docs / ".git" / "config.txt")
    touch_binary(docs / "notes.xyz")

    result = expand_inputs([str(docs)], acl=["group:eng"])

    assert [i.path for i in result.items] == [
        (docs / "a.txt").resolve(),
        (docs / "b.md").resolve(),
        (docs / "sub" / "c.pdf").resolve(),
        (docs / "sub" / "deeper" / "d.png").resolve(),
    ]
    assert [i.modality for i in result.items] == ["text", "text", "pdf", "image"]
    assert [i.mime for i in result.items] == [
        "text/plain",
        "text/markdown",
        "application/pdf",
        "image/png",
    ]
    assert all(i.acl == ("group:eng",) and i.title is None for i in result.items)
    rejected = only_rejection(result)
    assert rejected.path.endswith("notes.xyz")
    assert rejected.explicit is False
    assert rejected.reason.startswith(XYZ_REFUSED)


@pytest.mark.parametrize(
    ("name", "modality"),
    [
        ("a.txt", "text"),
        ("a.MD", "text"),
        ("a.pdf", "pdf"),
        ("a.jpeg", "image"),
        ("a.webp", "image"),
        ("a.tiff", "image"),
        ("a.flac", "audio"),
        ("a.m4a", "audio"),
        ("a.mp4", "audio"),
        ("a.mkv", "audio"),
        ("a.webm", "audio"),
    ],
)
def test_extension_decides_modality(tmp_path: Path, name: str, modality: str) -> None:
    result = expand_inputs([str(touch(tmp_path / name))])
    assert result.rejected == ()
    assert [i.modality for i in result.items] == [modality]


def test_explicit_unsupported_file_names_extension_and_supported_list(tmp_path: Path) -> None:
    result = expand_inputs([str(touch_binary(tmp_path / "data.xyz"))])
    assert result.items == ()
    rejected = only_rejection(result)
    assert rejected.explicit is True
    assert rejected.reason.startswith(XYZ_REFUSED)
    for ext in FILE_TYPES:
        assert ext in rejected.reason


def test_missing_path_and_empty_folder_are_rejected(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = expand_inputs(["nope.txt", "empty"], root=tmp_path)
    assert result.items == ()
    got = reasons(result)
    assert got["nope.txt"] == "no such file or directory"
    assert got[str((tmp_path / "empty").resolve())] == "folder contains no files"


def test_glob_with_double_star_relative_to_root(tmp_path: Path) -> None:
    touch(tmp_path / "docs" / "top.md")
    touch(tmp_path / "docs" / "x" / "y" / "deep.md")
    touch(tmp_path / "docs" / "x" / "skip.txt")
    touch(tmp_path / "docs" / ".private" / "secret.md")

    result = expand_inputs(["docs/**/*.md"], root=tmp_path)

    assert [i.path.name for i in result.items] == ["top.md", "deep.md"]
    assert result.rejected == ()
    nothing = expand_inputs(["docs/**/*.pdf"], root=tmp_path)
    assert nothing.items == ()
    assert only_rejection(nothing).reason == "no files match this pattern"


def test_same_file_reached_three_ways_is_returned_once(tmp_path: Path) -> None:
    doc = touch(tmp_path / "docs" / "a.txt")
    link = tmp_path / "link.txt"
    link.symlink_to(doc)
    result = expand_inputs(
        [str(doc), str(tmp_path / "docs"), str(link), "docs/*.txt"], root=tmp_path
    )
    assert [i.path for i in result.items] == [doc.resolve()]
    assert result.rejected == ()


def write_manifest(path: Path, lines: list[object]) -> Path:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_manifest_entries_carry_title_acl_tags_and_resolve_against_its_folder(
    tmp_path: Path,
) -> None:
    corpus = tmp_path / "corpus"
    touch(corpus / "a.md")
    touch(corpus / "img" / "b.png")
    touch(corpus / "c.txt")
    manifest = write_manifest(
        corpus / "manifest.jsonl",
        [
            {
                "path": "a.md",
                "title": "  Alpha  ",
                "acl": ["user:alice", "user:alice", "group:bob"],
                "tags": ["x"],
            },
            "",
            {"path": "img/b.png"},
            {"path": str((corpus / "c.txt").resolve()), "acl": []},
        ],
    )
    # run from elsewhere: relative entries follow the manifest, not the working directory
    result = expand_inputs([str(manifest)], acl=["group:all"], root=tmp_path / "elsewhere")

    assert result.rejected == ()
    a, b, c = result.items
    assert (a.path, a.title, a.acl, a.tags) == (
        (corpus / "a.md").resolve(),
        "Alpha",
        ("group:bob", "user:alice"),
        ("x",),
    )
    assert (b.path, b.title, b.acl, b.modality) == (
        (corpus / "img" / "b.png").resolve(),
        None,
        ("group:all",),
        "image",
    )
    assert c.acl == ()  # an explicit empty list in the manifest wins over the default


def test_manifest_refuses_paths_escaping_its_folder(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    outside = touch(tmp_path / "outside.txt")
    touch(corpus / "ok.txt")
    (corpus / "sneaky.txt").symlink_to(outside)
    manifest = write_manifest(
        corpus / "m.jsonl",
        [
            {"path": "../../etc/passwd"},
            {"path": "../outside.txt"},
            {"path": str(outside)},
            {"path": "/etc/hostname"},
            {"path": "sneaky.txt"},
            {"path": "ok.txt"},
        ],
    )
    result = expand_inputs([str(manifest)])

    assert [i.path.name for i in result.items] == ["ok.txt"]
    got = reasons(result)
    assert set(got) == {
        "../../etc/passwd",
        "../outside.txt",
        str(outside),
        "/etc/hostname",
        "sneaky.txt",
    }
    for line, path in enumerate(["../../etc/passwd", "../outside.txt", str(outside)], start=1):
        assert got[path] == (
            f"manifest {manifest.resolve()} line {line}: path escapes the manifest's folder "
            f"{corpus.resolve()}"
        )
    assert "line 5: path escapes" in got["sneaky.txt"]


def test_manifest_malformed_lines_name_file_and_line(tmp_path: Path) -> None:
    touch(tmp_path / "good.txt")
    manifest = write_manifest(
        tmp_path / "m.jsonl",
        [
            "{not json",
            '["a list"]',
            {"title": "no path"},
            {"path": "good.txt", "acl": "alice"},
            {"path": "good.txt", "colour": "red"},
            {"path": "missing.txt"},
            {"path": "notes.xyz"},
            {"path": "good.txt"},
        ],
    )
    touch_binary(tmp_path / "notes.xyz")
    result = expand_inputs([str(manifest)])

    assert [i.path.name for i in result.items] == ["good.txt"]
    by_line = {}
    for r in result.rejected:
        prefix = f"manifest {manifest.resolve()} line "
        assert r.reason.startswith(prefix), r.reason
        by_line[int(r.reason[len(prefix) :].split(":")[0])] = r
    assert sorted(by_line) == [1, 2, 3, 4, 5, 6, 7]
    for line in range(1, 6):
        assert "malformed line" in by_line[line].reason
        assert by_line[line].path == f"{manifest.resolve()}:{line}"
    assert "path" in by_line[3].reason  # names the missing field
    assert "acl" in by_line[4].reason
    assert "colour" in by_line[5].reason
    assert by_line[6].reason.endswith("no such file")
    assert "unsupported file type '.xyz'" in by_line[7].reason


def test_a_bare_acl_name_rejects_the_manifest_line_naming_it(tmp_path: Path) -> None:
    touch(tmp_path / "a.txt")
    touch(tmp_path / "b.txt")
    manifest = write_manifest(
        tmp_path / "m.jsonl",
        [{"path": "a.txt", "acl": ["group:ops", "ada"]}, {"path": "b.txt", "acl": ["user:ada"]}],
    )
    result = expand_inputs([str(manifest)])

    assert [(i.path.name, i.acl) for i in result.items] == [("b.txt", ("user:ada",))]
    (rejected,) = result.rejected
    assert rejected.path == f"{manifest.resolve()}:1"
    assert "acl.1" in rejected.reason and "'ada'" in rejected.reason
    assert "'user:ada'" in rejected.reason and "'group:ada'" in rejected.reason


def test_a_bare_acl_name_for_every_input_is_refused_before_anything_is_read(
    tmp_path: Path,
) -> None:
    touch(tmp_path / "a.txt")
    with pytest.raises(InvalidAclError, match=r"'team-a'.*'group:team-a'"):
        expand_inputs([str(tmp_path / "a.txt")], acl=["user:ada", "team-a"])


def test_jsonl_met_in_a_folder_is_not_read_as_a_manifest(tmp_path: Path) -> None:
    touch(tmp_path / "d" / "data.jsonl", json.dumps({"path": "/etc/passwd"}))
    touch(tmp_path / "d" / "a.txt")
    result = expand_inputs([str(tmp_path / "d")])
    assert [i.path.name for i in result.items] == ["a.txt"]
    rejected = only_rejection(result)
    assert rejected.explicit is False
    assert "manifests only when named directly" in rejected.reason


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("fileinput.py", "text/plain"),
        ("kern.log", "text/plain"),
        # a data format is read as text and stored under its own type
        ("synopsis.json", "application/json"),
        ("config.yaml", "application/yaml"),
        ("CI.YML", "application/yaml"),
        ("catalog.xml", "application/xml"),
        ("pyproject.toml", "application/toml"),
    ],
)
def test_a_text_file_of_no_known_type_is_read_as_text(tmp_path: Path, name: str, mime: str) -> None:
    result = expand_inputs([str(touch(tmp_path / "docs" / name, "port = 8080\n"))])
    (item,) = result.items
    assert (item.modality, item.mime) == ("text", mime) and not result.rejected


def test_svg_is_a_picture_and_unnamed_jsonl_is_not_read_as_text(tmp_path: Path) -> None:
    touch(tmp_path / "docs" / "logo.svg", '<svg xmlns="http://www.w3.org/2000/svg"></svg>\n')
    touch(tmp_path / "docs" / "job.jsonl", '{"path": "a.md"}\n')
    result = expand_inputs([str(tmp_path / "docs")])
    (item,) = result.items
    assert (item.path.name, item.modality, item.mime) == ("logo.svg", "image", "image/svg+xml")
    assert [r.kind for r in result.rejected] == ["manifest_not_named"]


def test_a_legacy_office_file_is_read_when_libreoffice_is_installed(tmp_path: Path) -> None:
    """orchard_lo.doc: tests/data/formats/orchard.odt saved as Word 97 by LibreOffice 7."""
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copy(Path(__file__).parents[1] / "data" / "formats" / "orchard_lo.doc", folder)
    expanded = expand_inputs([str(folder)])
    assert not expanded.rejected
    (item,) = expanded.items
    assert (item.modality, item.mime) == ("text", "application/msword")


def test_without_libreoffice_a_legacy_office_file_is_skipped_saying_how_to_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(libreoffice, "soffice", lambda: None)  # a machine without LibreOffice
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copy(Path(__file__).parents[1] / "data" / "formats" / "orchard_lo.doc", folder)
    expanded = expand_inputs([str(folder)])
    assert not expanded.items
    (rejected,) = expanded.rejected
    assert (rejected.kind, rejected.explicit) == ("unsupported_type", False)
    assert rejected.reason == (
        "unsupported file type '.doc': a legacy Word document: install LibreOffice (soffice) "
        "to read it, or save it as .docx"
    )


@pytest.fixture
def libreoffice_switch():
    """Restores the process-wide LibreOffice switch a test turns."""
    before = libreoffice.allowed()
    yield
    libreoffice.allow(before)


@pytest.mark.skipif(libreoffice.soffice() is None, reason="LibreOffice is not installed")
@pytest.mark.usefixtures("libreoffice_switch")
def test_libreoffice_turned_off_by_the_operator_skips_office_files_saying_so(
    tmp_path: Path,
) -> None:
    from kgrag.agent.providers import agent_parts
    from kgrag.config import Settings
    from kgrag.ingest.formats.registry import DocumentFormat
    from kgrag.ingest.models import SourceItem

    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copy(Path(__file__).parents[1] / "data" / "formats" / "orchard_lo.doc", folder)
    agent_parts(Settings(libreoffice="off", data_dir=tmp_path / "data"))
    expanded = expand_inputs([str(folder)])
    assert not expanded.items
    (rejected,) = expanded.rejected
    assert rejected.kind == "unsupported_type"
    assert rejected.reason == (
        "unsupported file type '.doc': a legacy Word document: reading it through LibreOffice "
        "is turned off here (KGRAG_LIBREOFFICE=off), or save it as .docx"
    )
    # a caller holding the format from before is refused too: no soffice process is started
    fmt = libreoffice.DOC
    assert isinstance(fmt, DocumentFormat)
    item = SourceItem(path=folder / "orchard_lo.doc", modality="text", mime="application/msword")
    with pytest.raises(IngestError, match="turned off here"):
        fmt.parse(item, item.path.read_bytes())
    agent_parts(Settings(data_dir=tmp_path / "data"))  # auto: read again
    (item,) = expand_inputs([str(folder)]).items
    assert item.mime == "application/msword"


def test_an_unknown_libreoffice_setting_is_refused() -> None:
    from pydantic import ValidationError

    from kgrag.config import Settings

    with pytest.raises(ValidationError, match="libreoffice"):
        Settings(libreoffice="sometimes")
