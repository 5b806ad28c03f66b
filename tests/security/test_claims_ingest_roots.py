"""SECURITY.md: ``POST /ingest`` reads only inside the server's ingest roots, for every way a
path can reach a file (given directly, through ``..``, a symlink, a folder, a glob or a JSONL
manifest), and not at all without a root; a manifest line naming a file outside is rejected by
the manifest reader. Checked on :func:`confine_paths` (what the endpoint
calls) over real files and symlinks; the HTTP status of each refusal is tested over a real server
in tests/integration/test_server.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgrag.ingest.sources import expand_inputs
from kgrag.server.errors import ApiError
from kgrag.server.security import confine_paths


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "docs").mkdir(parents=True)
    outside.mkdir()
    (root / "docs" / "fine.md").write_text("# Fine\n\ninside the root\n")
    (outside / "private.md").write_text("# Private\n\noutside the root\n")
    (root / "docs" / "link.md").symlink_to(outside / "private.md")
    (root / "inside.jsonl").write_text(json.dumps({"path": "docs/fine.md"}) + "\n")
    (root / "via_link.jsonl").write_text(json.dumps({"path": "docs/link.md"}) + "\n")
    (root / "via_dots.jsonl").write_text(json.dumps({"path": "../outside/private.md"}) + "\n")
    return root


def _refused(paths: list[str], roots: list[Path]) -> ApiError:
    with pytest.raises(ApiError) as info:
        confine_paths(paths, [], roots)
    return info.value


def test_without_a_root_nothing_is_ingested(root: Path) -> None:
    error = _refused(["docs/fine.md"], [])
    assert (error.status, error.error) == (403, "ingest_disabled")


@pytest.mark.parametrize(
    "path",
    [
        "../outside/private.md",
        "docs/../../outside/private.md",
        "docs/link.md",  # a symlink inside the root to a file outside
        "docs",  # a folder holding that symlink
        "**/*.md",  # a glob reaching it
    ],
)
def test_every_way_out_of_the_root_is_refused(root: Path, path: str) -> None:
    error = _refused([path], [root])
    assert (error.status, error.error) == (403, "path_outside_roots"), error


@pytest.mark.parametrize("manifest", ["via_link.jsonl", "via_dots.jsonl"])
def test_a_manifest_line_naming_a_file_outside_is_rejected_unread(
    root: Path, manifest: str
) -> None:
    """The manifest reader refuses a line whose file (symlinks followed) leaves the manifest's
    folder: the job reports the line, no file outside is ever an item to read."""
    confined = confine_paths([manifest], [], [root])
    expanded = expand_inputs(confined, [], root=root)
    assert expanded.items == ()
    assert [r.reason for r in expanded.rejected] == [
        f"manifest {root / manifest} line 1: path escapes the manifest's folder {root}"
    ]


def test_inside_the_root_every_form_is_accepted(root: Path) -> None:
    (root / "docs" / "link.md").unlink()  # the control: the same inputs, nothing outside
    for path in ("docs/fine.md", str(root / "docs" / "fine.md"), "docs", "**/*.md"):
        assert confine_paths([path], [], [root]), path
    assert confine_paths(["inside.jsonl"], [], [root]) == [str(root / "inside.jsonl")]


def test_a_nul_byte_in_a_path_is_refused(root: Path) -> None:
    error = _refused(["docs/fine.md\x00.txt"], [root])
    assert (error.status, error.error) == (400, "invalid_path")
