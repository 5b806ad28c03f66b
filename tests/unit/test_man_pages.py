"""Manual pages (roff source) are read as their words and titled ``name(section)``.

Found on a folder of real files (BENCHMARKS.md, "A sixth folder"): Debian's ``zstd.1.gz`` was a
text document titled ``.TH "ZSTD" "1" "February 2023" ...`` whose passages read
``\\fB\\-\\-ultra\\fR: unlocks high compression levels 20+ (maximum 22)``, so "--ultra" was in no
passage and "What is the maximum zstd compression level with --ultra?" quoted the changelog."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kgrag.ingest.parsers import parse
from kgrag.ingest.roff import is_roff, man_page_name, read_as_man_page, roff_text
from kgrag.ingest.sources import expand_inputs

MAN = Path(__file__).parents[1] / "data" / "man"
LIMIT = 10_000_000


def _read(name: str, tmp_path: Path, folder: Path = MAN) -> tuple[str, str]:
    """The page as a file of the folder it was installed in would be read (``zstd.1``)."""
    path = tmp_path / name.removesuffix(".gz")
    path.write_bytes(gzip.decompress((folder / name).read_bytes()))
    (found,) = expand_inputs([str(path)]).items
    doc = parse(found, LIMIT)
    return doc.title, "\n".join(p.text for p in doc.pages)


@pytest.mark.parametrize(
    ("name", "title", "says"),
    [
        (
            "zstd.1.gz",
            "zstd(1)",
            "--ultra: unlocks high compression levels 20+ (maximum 22), using a lot more memory.",
        ),
        (
            "cscope.1.gz",
            "cscope(1)",
            "cscope is an interactive, screen-oriented tool that allows the user to browse "
            "through C source files for specified elements of code.",
        ),
        ("lwp-dump.1p.gz", "lwp-dump(1p)", "The lwp-dump program will get the resource identified"),
        ("choom.1.gz", "choom(1)", "choom - display and adjust OOM-killer score."),
    ],
)
def test_a_man_page_is_read_as_its_words_and_titled_by_name_and_section(
    name: str, title: str, says: str, tmp_path: Path
) -> None:
    got_title, text = _read(name, tmp_path)
    assert got_title == title
    assert says in " ".join(text.split())
    # no roff left: requests, font changes, escaped hyphens, macro definitions
    assert "\\f" not in text and "\\-" not in text and ".TH" not in text
    assert not any(line.startswith((".", "'")) for line in text.splitlines())


def test_sections_are_paragraphs_of_their_own_and_bullets_items(tmp_path: Path) -> None:
    _, text = _read("zstd.1.gz", tmp_path)
    paragraphs = text.split("\n\n")
    assert paragraphs[:2] == [
        "NAME",
        "zstd - zstd, zstdmt, unzstd, zstdcat - Compress or decompress .zst files",
    ]
    assert "DESCRIPTION" in paragraphs and "OPTIONS" in paragraphs
    # the tbl block of the synopsis keeps its words, not its format line ("allbox;")
    assert "zstd [OPTIONS] [- | INPUT-FILE] [-o OUTPUT-FILE]" in paragraphs
    assert "allbox;" not in text
    assert "- Source files are preserved by default." in text


def test_only_roff_source_is_read_as_roff() -> None:
    assert is_roff('.\\" a comment\n.TH "JQ" "1" "July 2025" ""\n.SH "NAME"\n')
    # a text that merely starts with a dot, a log rotated to "syslog.1", a Markdown page
    assert not is_roff(".hidden files are not listed\n.TH is a roff request\n")
    assert not is_roff("Nov 26 19:01:33 host kernel: eth0 up\n")
    assert not is_roff("# zstd\n\n.TH in a code span\n")


def test_definitions_and_conditions_are_never_text() -> None:
    text, title = roff_text(
        ".de XX\nnot a word of the page\n..\n.ig\nignored too\n..\n"
        '.if n .ds Aq \'\n.TH "TOOL" "8"\n.SH NAME\ntool \\- does \\fIthings\\fP\\(em well\n'
    )
    assert title == "tool(8)"
    assert text == "NAME\n\ntool - does things— well"


def test_a_pod2man_page_keeps_its_option_tags_and_not_its_index_entries(tmp_path: Path) -> None:
    """Found on the eleventh real folder (BENCHMARKS.md): readelf's options read "-a Item -a
    --all Item --all ..." and "rF Title READELF 1": pod2man's ``.IX`` (an index entry the page
    defines as a macro printing nothing) was read as words, the ``.ie n .IP "-a"`` tags were
    dropped with their condition, and ``.PD 0`` split a short option from its long one."""
    _, text = _read("readelf.1.gz", tmp_path, MAN.parent / "pod2man")
    paragraphs = text.split("\n\n")
    assert "Item" not in text.split() and "Title" not in text.split() and "rF" not in text
    assert paragraphs[0] == "NAME"  # not "\\" from a condition's "\\{\\" line
    assert any(p.startswith("-a, --all Equivalent to specifying --file-header") for p in paragraphs)
    assert any(p.startswith("-h, --file-header Displays the information") for p in paragraphs)
    assert (
        "This program performs a similar function to objdump but it goes into more detail"
        in " ".join(text.split())
    )
    _, lwp = _read("lwp-dump.1p.gz", tmp_path)
    assert "--agent string Override the user agent string passed to the server." in lwp
    assert "Item" not in lwp.split() and "Header" not in lwp.split()


def test_a_macro_the_page_defines_prints_its_arguments_only_if_its_body_does() -> None:
    text, _ = roff_text(
        '.de IX\n..\n.de URL\n\\\\$2 <\\\\$1>\n..\n.TH "TOOL" "1"\n.SH NAME\n'
        '.IX Header "NAME"\ntool \\- a tool\n.URL "https://example.org" "Home"\n'
    )
    assert "Header" not in text and "https://example.org" in text


def test_an_option_and_its_indented_description_are_one_paragraph(tmp_path: Path) -> None:
    """DocBook and Asciidoctor write an option as ``.PP`` / its forms / ``.RS 4`` / its body: the
    forms stood in a paragraph of their own, so on the eleventh real folder modprobe's "This
    option causes modprobe to remove rather than insert a module" did not say which option."""
    _, text = _read("choom.1.gz", tmp_path)
    paragraphs = text.split("\n\n")
    assert "-p, --pid pid Specifies process ID." in paragraphs
    assert "-V, --version Print version and exit." in paragraphs
    described = "The choom command displays and adjusts Out-Of-Memory killer score setting."
    assert described in paragraphs


@pytest.mark.parametrize("name", ["zstd.1.gz", "cscope.1.gz", "choom.1.gz", "lwp-dump.1p.gz"])
def test_a_man_page_stored_as_plain_text_is_told_by_its_name_and_what_was_stored(
    name: str, tmp_path: Path
) -> None:
    """What migration 0013_man_page_types asks of a document an older kgrag stored as plain
    text: its source and its first line as title (before kgrag read roff), or its words and
    ``name(section)`` title (before kgrag stored man pages as text/troff)."""
    source = gzip.decompress((MAN / name).read_bytes()).decode()
    title, words = _read(name, tmp_path)
    assert read_as_man_page(name, source.splitlines()[0], source[:2000])
    assert read_as_man_page(name, title, words[:2000])


@pytest.mark.parametrize(
    ("name", "title", "text"),
    [
        # a rotated log, a numbered backup, a man page name on a text that is not a man page
        ("syslog.1", "syslog", "Nov 26 06:25:01 host CRON[1042]: (root) CMD (run-parts)\n"),
        ("notes.txt.2", "Meeting notes", "Meeting notes\n\nAgenda (1)\n"),
        ("release.3", "Release 3 (draft)", "Release 3 (draft)\n\nWhat changed.\n"),
        # roff source under a name that is no man page's: ingestion reads it as one, the
        # migration leaves it (its name says nothing)
        ("cscope.man", "cscope(1)", '.TH CSCOPE "1"\n.SH NAME\ncscope\n'),
    ],
)
def test_a_plain_text_named_like_a_man_page_is_not_one(name: str, title: str, text: str) -> None:
    assert not read_as_man_page(name, title, text)


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("zstd.1.gz", ("zstd", "1")),
        ("Foo::Bar.3pm", ("Foo::Bar", "3pm")),
        ("ssl.3ssl.gz", ("ssl", "3ssl")),
        ("lwp-dump.1p.gz", ("lwp-dump", "1p")),
        ("xterm.1x.xz", ("xterm", "1x")),
        ("iptables.8", ("iptables", "8")),
        ("zstd.1.txt", None),
        ("notes.md", None),
        ("page.0", None),
    ],
)
def test_a_man_page_file_name_gives_the_page_and_its_section(
    name: str, found: tuple[str, str] | None
) -> None:
    assert man_page_name(name) == found


def test_a_macro_argument_is_read_in_copy_mode(tmp_path: Path) -> None:
    """``.B "\\-\\-show\\\\-limits"`` (xargs(1), twelfth real folder) is "--show-limits", as
    groff prints it, not "--show\\-limits": a macro's arguments are read in copy mode, where
    ``\\\\`` is one backslash. The page sits in a folder of its own (the listing test ingests
    every page of tests/data/man)."""
    title, text = _read("xargs.1.gz", tmp_path, MAN.parent / "man_copy_mode")
    assert title == "xargs(1)"
    assert "--show-limits Display the limits on the command-line length" in " ".join(text.split())
    assert "\\-" not in text
