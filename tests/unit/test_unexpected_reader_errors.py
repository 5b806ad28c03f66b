"""An exception no reader meant (a parser's bug, a library's own error) is the failure of that
one file, or of that one member of an archive, with a reason in words that names the reader and
the exception's class; the job's other files (and the archive's other members) go on. An
interrupt or an exit still goes through, and so does a store error.

The reader that breaks is a document format registered for a suffix of its own (the registry is
the extension point a plugin format uses), so the test needs no file that crashes a built-in
reader: the fuzzer of tests/unit/test_fuzz_readers.py finds those, and they are fixed there."""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kgrag.errors import StoreError
from kgrag.ingest.containers.expand import parse_all
from kgrag.ingest.formats import registry
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent
from kgrag.ingest.models import ParsedPage, SourceItem
from kgrag.ingest.sources import expand_inputs

SUFFIX = ".broken"


def _reader(error: Callable[[], BaseException]) -> Callable[[SourceItem, bytes], ParsedContent]:
    def parse(item: SourceItem, data: bytes) -> ParsedContent:
        if b"crash" in data:
            raise error()
        return ParsedContent(title=None, pages=(ParsedPage(number=None, text=data.decode()),))

    return parse


Install = Callable[[Callable[[], BaseException]], None]


@pytest.fixture
def broken_format(monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """Registers, for this test only, a format for SUFFIX whose reader raises what it is given
    on a file holding "crash"."""

    def install(error: Callable[[], BaseException]) -> None:
        fmt = DocumentFormat(
            name="Broken", suffixes=(SUFFIX,), mime="text/x-broken", parse=_reader(error)
        )
        monkeypatch.setitem(registry._BY_SUFFIX, SUFFIX, fmt)

    yield install


def _item(path: Path) -> SourceItem:
    (item,) = expand_inputs([str(path)]).items
    return item


def test_a_reader_bug_fails_that_file_with_a_reason_in_words(
    tmp_path: Path, broken_format: Install
) -> None:
    broken_format(lambda: KeyError("/Root"))
    bad = tmp_path / "report.broken"
    bad.write_text("crash here", "utf-8")
    parsed = parse_all(_item(bad), 1_000_000)
    assert parsed.documents == ()
    (refused,) = parsed.refused
    assert refused.path == str(bad) and refused.explicit  # a failure, not a skip
    assert refused.reason == "could not be read: the Broken reader failed (KeyError: '/Root')"


def test_recursion_and_memory_errors_fail_the_file(tmp_path: Path, broken_format: Install) -> None:
    for error, said in ((RecursionError, "RecursionError"), (MemoryError, "MemoryError")):
        broken_format(lambda error=error: error("maximum recursion depth exceeded"))
        bad = tmp_path / f"{said}.broken"
        bad.write_text("crash", "utf-8")
        (refused,) = parse_all(_item(bad), 1_000_000).refused
        assert f"({said}: maximum recursion depth exceeded)" in refused.reason


def test_a_member_that_breaks_its_reader_fails_alone(
    tmp_path: Path, broken_format: Install
) -> None:
    broken_format(lambda: IndexError("list index out of range"))
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("good.txt", "The lamp room is cleaned every Tuesday.")
        z.writestr("bad.broken", "crash")
        z.writestr("fine.broken", "Tide tables are printed in March.")
    parsed = parse_all(_item(archive), 1_000_000)
    paths = [str(d.source.path) for d in parsed.documents]
    assert paths == [str(archive), f"{archive}!good.txt", f"{archive}!fine.broken"]
    (refused,) = parsed.refused
    assert refused.path == f"{archive}!bad.broken"
    assert refused.reason == (
        "could not be read: the Broken reader failed (IndexError: list index out of range)"
    )


def test_a_long_exception_text_is_cut(tmp_path: Path, broken_format: Install) -> None:
    broken_format(lambda: ValueError("x" * 5000))
    bad = tmp_path / "long.broken"
    bad.write_text("crash", "utf-8")
    (refused,) = parse_all(_item(bad), 1_000_000).refused
    assert len(refused.reason) < 300 and refused.reason.endswith("…)")


@pytest.mark.parametrize(
    "error", [KeyboardInterrupt, SystemExit, lambda: StoreError("the store went away")]
)
def test_interrupts_exits_and_store_errors_still_stop(
    tmp_path: Path, broken_format: Install, error: Callable[[], BaseException]
) -> None:
    broken_format(error)
    bad = tmp_path / "stop.broken"
    bad.write_text("crash", "utf-8")
    with pytest.raises((KeyboardInterrupt, SystemExit, StoreError)):
        parse_all(_item(bad), 1_000_000)


def test_a_reader_is_named_by_the_format_registry() -> None:
    from pathlib import PurePath

    from kgrag.ingest import formats
    from kgrag.ingest.unexpected import reader_name

    for suffix in (".html", ".docx", ".odt", ".pptx", ".epub", ".rst", ".rtf"):
        fmt = formats.for_suffix(suffix)
        assert fmt is not None
        assert reader_name(PurePath(f"a{suffix}")) == f"the {fmt.name} reader"
    assert reader_name(PurePath("a.html")) == "the HTML reader"
    assert reader_name(PurePath("a.docx")) == "the Word (.docx) reader"
    assert reader_name(PurePath("a.pdf"), "pdf") == "the PDF reader"
    assert reader_name(PurePath("a.zip")) == "the zip archive reader"
