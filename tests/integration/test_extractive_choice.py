"""Which sentence the extractive answer quotes first, on real files of this machine's
/usr/share/doc (read by the tests, cut into passages as ingestion would give them): a title or
a heading over nothing is no answer, a sentence that only restates the question introduces
what follows, a version inside a range ("from 1.07 to 1.07.1") or a longer version is another
release, and the first sentence holds (nearly) as many of the question's words as any.
Found on a real folder (BENCHMARKS.md, "A sixth folder"). Real MiniLM embedder, no store."""

from __future__ import annotations

import gzip
import re
from functools import cache
from pathlib import Path

import pytest

from kgrag.agent.answering import pointed_at
from kgrag.agent.synthesis import extractive_answer, passage_sentences, select_sentences
from kgrag.config import Settings
from kgrag.core import Hit
from kgrag.ingest.roff import roff_text
from kgrag.modalities import factory
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.rule import identifiers

DOC = Path("/usr/share/doc")


@cache
def _embedder() -> TextEmbedder:
    return factory.text_embedder(Settings())


def _read(path: Path) -> str:
    if not path.exists():
        pytest.skip(f"{path} is not installed on this machine")
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            return f.read()
    return path.read_text(encoding="utf-8", errors="replace")


def _ask(question: str, hits: list[Hit]) -> list[str]:
    pointed = pointed_at(frozenset(), (), identifiers(question))
    return [s for s, _ in select_sentences(question, hits, _embedder(), prefer=pointed)]


def test_a_version_where_a_range_starts_is_another_release() -> None:
    """bc's NEWS: "What changed in bc 1.07?" quoted "Changes in bc from 1.07 to 1.07.1."
    alone; the changes of 1.07 are under "Changes in bc from 1.06 to 1.07.", a line that only
    restates the question and so brings what it introduces."""
    news = _read(DOC / "bc/NEWS.gz")
    if "Changes in bc from 1.06 to 1.07." not in news:
        pytest.skip("another bc release")
    head = news[: news.index("Changes in dc from 1.3 to 1.4")]
    hit = Hit(id="news:c0", kind="chunk", score=1.0, text=head, title="NEWS (bc)")
    chosen = _ask("What changed in bc 1.07?", [hit])
    assert chosen[0] == "Changes in bc from 1.06 to 1.07.", chosen
    assert chosen[1] == "Added void functions.", chosen


def _announce() -> tuple[str, str, str]:
    text = _read(DOC / "libpng16-16/ANNOUNCE")
    title = text.splitlines()[0].strip()  # "libpng 1.6.39 - November 20, 2022"
    m = re.match(r"libpng (\d+\.\d+\.\d+)", title)
    if m is None or "\nChanges from version" not in text:
        pytest.skip("another libpng announcement")
    return text, title, m.group(1)


def test_the_title_of_an_announcement_is_no_answer() -> None:
    """libpng's ANNOUNCE: "What changed in libpng 1.6.39?" quoted the title line (and the
    sentence after it); the changes section is under "Changes from version 1.6.38 to version
    1.6.39", an underlined heading of the same file."""
    text, title, version = _announce()
    at = text.index("Other information:")
    hits = [
        Hit(id="announce:c0", kind="chunk", score=0.9, text=text[:at], title=title),
        Hit(id="announce:c1", kind="chunk", score=0.8, text=text[at : at + 1500], title=title),
    ]
    readme = _read(DOC / "libpng16-16/README.gz")
    readme_title = readme.splitlines()[0].strip()  # "README for libpng version 1.6.39"
    hits.insert(
        1, Hit(id="readme:c0", kind="chunk", score=0.85, text=readme[:1200], title=readme_title)
    )
    chosen = _ask(f"What changed in libpng {version}?", hits)
    assert chosen[0].startswith("Changes from version") and version in chosen[0], chosen
    assert chosen[1].startswith("* "), chosen  # the first change
    assert all(not s.startswith(title) for s in chosen), chosen


def test_underlined_headings_are_kept_apart_from_the_sentence_after_them() -> None:
    text, title, _ = _announce()
    hit = Hit(id="announce:c0", kind="chunk", score=1.0, text=text[:600], title=title)
    sentences = passage_sentences(hit)
    assert sentences[0] == (title, True)
    assert sentences[1] == (
        "This is a public release of libpng, intended for use in production code.",
        False,
    )


def test_a_title_gives_way_to_the_line_that_says_what_is_asked() -> None:
    """tzdata's README.Debian: "What is the "right" version of tzdata?" quoted "README for
    tzdata" and the package's description first; the line saying what the "right" version is
    comes first now."""
    text = _read(DOC / "tzdata/README.Debian")
    if '"right" version is based on' not in text:
        pytest.skip("another tzdata README")
    hit = Hit(id="tz:c0", kind="chunk", score=1.0, text=text[:1500], title="README for tzdata")
    chosen = _ask('What is the "right" version of tzdata?', [hit])
    assert '"right" version is based on' in chosen[0], chosen


def test_the_first_sentence_holds_most_of_the_question() -> None:
    """zstd: "What is the maximum zstd compression level with --ultra?" quoted a changelog
    release run together into one 120-word "sentence" and a README line holding only "zstd"
    and "compression"; the man page's "--ultra: unlocks high compression levels 20+ (maximum
    22)" holds four of the question's five words."""
    readme = _read(DOC / "zstd/README.md.gz")
    changelog = _read(DOC / "zstd/changelog.gz")
    man, man_title = roff_text(_read(Path("/usr/share/man/man1/zstd.1.gz")))
    at = readme.find("Zstd can also offer stronger compression ratios")
    release = changelog.find("Changed : --ultra now enables levels beyond 19")
    option = man.find("- --ultra:")
    if min(at, release, option) < 0:
        pytest.skip("another zstd release")
    start = changelog.rfind("\nv", 0, release)
    hits = [
        Hit(id="readme:c3", kind="chunk", score=0.9, text=readme[at - 400 : at + 300]),
        Hit(
            id="changelog:c56",
            kind="chunk",
            score=0.85,
            text=changelog[start : changelog.find("\nv", release)],
            title="changelog (zstd)",
        ),
        Hit(
            id="man:c4",
            kind="chunk",
            score=0.8,
            text=man[option - 300 : option + 500],
            title=man_title,
        ),
    ]
    question = "What is the maximum zstd compression level with --ultra?"
    # the entities the agent linked to the question on the real folder: one by "ultra" alone
    linked = ["Compression", "Zstd", "Support for Block-Level Sequence Producer", "Sparc Ultra 10"]
    chosen = [s for s, _ in select_sentences(question, hits, _embedder(), entity_names=linked)]
    assert chosen[0].startswith("- --ultra: unlocks high compression levels"), chosen


def test_a_contents_line_is_no_sentence() -> None:
    """A PDF manual's table of contents ("9.2.9. Acting on Massif's Information ....... 158")
    is quoted for no question; made from the section titles of Valgrind's HTML manual."""
    page = _read(DOC / "valgrind/html/ms-manual.html")
    titles = re.findall(r'<a href="ms-manual.html#[^"]*">([^<]+)</a>', page)[:6]
    if len(titles) < 2:
        pytest.skip("another Valgrind manual")
    contents = "\n".join(f"{t.strip()} {'.' * 40} {158 + n}" for n, t in enumerate(titles))
    prose = "Massif is a heap profiler. It measures how much heap memory your program uses."
    text = f"{contents}\n\n{prose}"
    hit = Hit(id="manual:c12", kind="chunk", score=1.0, text=text, title="Valgrind Documentation")
    assert all("....." not in s for s, _ in passage_sentences(hit))
    chosen = _ask("How do I use Massif and ms_print?", [hit])
    assert chosen and all("....." not in s for s in chosen), chosen


def test_an_answer_does_not_stop_on_what_announces_a_command() -> None:
    """lsof's quick start (the real file, kept in tests/data/near_miss): "How do I find listening
    sockets with lsof?" ended on "... open on your machine with:", at the cap of three quotes,
    and the command it announces ("$ lsof -i", a piece too short to count as a sentence) was
    never a candidate."""
    path = Path(__file__).resolve().parents[1] / "data" / "near_miss" / "00QUICKSTART.gz"
    text = _read(path)
    start = text.index("5.  Finding Listening Sockets\n=")
    end = text.index("6.  Finding a Particular Network Connection\n=")
    hit = Hit(id="qs:c5", kind="chunk", score=1.0, text=text[start:end], title="Quick Start")
    chosen = _ask("How do I find listening sockets with lsof?", [hit])
    assert "$ lsof -i" in chosen, chosen
    at = chosen.index("$ lsof -i")
    assert chosen[at - 1].endswith("open on your machine with:"), chosen


def test_a_short_command_after_a_colon_is_quoted() -> None:
    """Valgrind's manual (manual-core-adv.html, its paragraphs as ingested): "In another
    shell, start GDB:" announces "gdb prog", a piece too short to count as a sentence, which
    was dropped."""
    text = "\n\n".join(
        [
            "If you want to debug a program with GDB when using the Memcheck tool, start "
            "Valgrind like this:",
            "valgrind --vgdb=yes --vgdb-error=0 prog",
            "In another shell, start GDB:",
            "gdb prog",
            "Then give the following command to GDB:",
            "target remote | vgdb",
        ]
    )
    hit = Hit(id="adv:c0", kind="chunk", score=1.0, text=text, title="manual-core-adv.html")
    sentences = [s for s, _ in passage_sentences(hit)]
    assert sentences[sentences.index("In another shell, start GDB:") + 1] == "gdb prog"
    assert "$ lsof -i" in [
        s for s, _ in passage_sentences(hit.model_copy(update={"text": "$ lsof -i"}))
    ]


@cache
def _valgrind_pages() -> list[str]:
    pdf = DOC / "valgrind/valgrind_manual.pdf.gz"
    if not pdf.exists():
        pytest.skip(f"{pdf} is not installed on this machine")
    import io

    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(gzip.decompress(pdf.read_bytes())))
    return [page.extract_text() for page in reader.pages]


def _pdf_page_holding(needle: str) -> Hit:
    for number, text in enumerate(_valgrind_pages(), start=1):
        if needle in text:
            return Hit(
                id=f"manual:p{number}",
                kind="chunk",
                score=1.0,
                text=text,
                title="Valgrind Documentation",
                page=number,
            )
    pytest.skip(f"another Valgrind manual: no page holds {needle!r}")


def test_a_numbered_pdf_heading_is_not_run_into_the_sentence_after_it() -> None:
    """Valgrind's PDF manual (a real folder, BENCHMARKS.md "A fourth folder"): the heading
    "4.5. Details of Memcheck's checking machinery" and the sentence on the next line were one
    quote, "Details of Memcheck's checking machinery Read this section ..."; "What is
    Callgrind used for?" is answered by the sentence saying what Callgrind is, not by one that
    names it, whatever page ranks first."""
    machinery = _pdf_page_holding("Details of Memcheck's checking machinery\nRead this")
    quoted = [s for s, _ in passage_sentences(machinery)]
    assert "4.5. Details of Memcheck's checking machinery" in quoted
    assert not any(s.startswith("Details of Memcheck's") for s in quoted), quoted
    requests = _pdf_page_holding("Callgrind provides the following specific client requests")
    overview = _pdf_page_holding("Callgrind is a profiling tool that records")
    chosen = _ask("What is Callgrind used for?", [requests, overview])
    assert chosen[0].startswith("Callgrind is a profiling tool that records"), chosen


def test_a_key_term_below_the_first_hits_is_read_before_the_closest_sentence() -> None:
    """ "What is Helgrind?" on Valgrind's PDF manual without its running headers: the first six
    evidence pages never name Helgrind, and the answer quoted the sentence nearest in meaning
    among them, which the support test then found naming nothing the question names (an
    abstention). The rest of the evidence is read when no sentence of the first hits holds a
    key term of the question."""
    pages = _valgrind_pages()
    others = [
        Hit(id=f"manual:p{n}", kind="chunk", score=1.0, text=t, title="Valgrind Documentation")
        for n, t in enumerate(pages, start=1)
        if "helgrind" not in t.lower() and len(t) > 1500
    ][20:26]
    news = _pdf_page_holding("Helgrind has been completely overhauled")
    chosen = _ask("What is Helgrind?", [*others, news])
    assert "helgrind" in chosen[0].lower(), chosen


def test_the_first_sentence_holds_what_the_question_asks_for() -> None:
    """kmod's README (a real folder, BENCHMARKS.md "An eleventh folder"): "Under which licenses
    is kmod released?" quoted the Git and Gitweb lines, which name kmod as every line of the
    README does, though the "License:" line of the next passage names what is asked for."""
    text = _read(DOC / "kmod/README.md")
    if "License:" not in text or "LGPLv2.1+" not in text:
        pytest.skip("another kmod README")
    cut = text.index("Irc:")
    end = text.index("\n", text.index("kmod. See libkmod/README") + 1)
    hits = [
        Hit(id="kmod:c0", kind="chunk", score=0.9, text=text[: cut + 40], title="kmod"),
        Hit(id="kmod:c1", kind="chunk", score=0.8, text=text[cut:end], title="kmod"),
    ]
    chosen = _ask("Under which licenses is kmod released?", hits)
    assert chosen[0].startswith("License: LGPLv2.1+ for libkmod"), chosen


def test_an_announced_list_is_quoted_with_its_items() -> None:
    """gzip's TODO: "What are the planned features of gzip?" quoted one item of the list and
    then the sentence announcing it ("Some of the planned features include:"), which names
    what is asked for; the list is quoted after it, item by item, even when the next passage
    (ranked first, overlapping) holds the items."""
    text = _read(DOC / "gzip/TODO")
    announcing = "Some of the planned features include:"
    if announcing not in text or "\n- Separate out the shell scripts" not in text:
        pytest.skip("another gzip TODO")
    first_item = text.index("\n- ", text.index(announcing)) + 1
    second_item = text.index("\n- ", first_item) + 1
    title = text.splitlines()[0].strip()  # "TODO file for gzip.", as ingestion titles it
    hits = [
        Hit(id="todo:c1", kind="chunk", score=0.9, text=text[first_item:], title=title),
        Hit(id="todo:c0", kind="chunk", score=0.8, text=text[:second_item], title=title),
    ]
    chosen = _ask("What are the planned features of gzip?", hits)
    assert chosen[0] == announcing, chosen
    assert chosen[1].startswith("- Remove some of the old porting cruft"), chosen
    assert chosen[2].startswith("- Separate out the shell scripts"), chosen
    assert chosen[3].startswith("- Internationalize by using gettext"), chosen


def test_short_items_of_an_announced_list_are_sentences() -> None:
    """Avahi's README: "Avahi has the following requirements:" then "- glib2", "- expat", ...;
    "- expat", shorter than a sentence, was dropped and the list cut there."""
    text = _read(DOC / "libavahi-common-data/README")
    if "Avahi has the following requirements:" not in text or "\t- expat" not in text:
        pytest.skip("another Avahi README")
    title = text.splitlines()[0].strip()  # as ingestion titles a text file
    hit = Hit(id="avahi:c0", kind="chunk", score=1.0, text=text, title=title)
    chosen = _ask("What are Avahi's requirements?", [hit])
    assert chosen[:4] == ["Avahi has the following requirements:", "- glib2", "- expat", chosen[3]]
    assert chosen[3].startswith("- libdaemon"), chosen


#: The Rust book's "What Is Ownership?" (doc.rust-lang.org/book, MIT or Apache-2.0), three of
#: its passages as a real folder's store held them (BENCHMARKS.md "An eleventh folder"): the
#: second chunk ends where the rules start, the next one starts with them.
_OWNERSHIP = (
    "What Is Ownership?\n\nOwnership is a set of rules that govern how a Rust program manages "
    "memory. All programs have to manage the way they use a computer’s memory while running. "
    "Some languages have garbage collection that regularly looks for no-longer-used memory as "
    "the program runs; in other languages, the programmer must explicitly allocate and free "
    "the memory. Rust uses a third approach: Memory is managed through a system of ownership "
    "with a set of rules that the compiler checks. If any of the rules are violated, the "
    "program won’t compile.",
    "Once you understand ownership, you won’t need to think about the stack and the heap very "
    "often. But knowing that the main purpose of ownership is to manage heap data can help "
    "explain why it works the way it does.\n\nOwnership Rules\n\nFirst, let’s take a look at "
    "the ownership rules. Keep these rules in mind as we work through the examples that "
    "illustrate them:\n\n- Each value in Rust has an owner.\n- There can only be one owner at "
    "a time.",
    "- Each value in Rust has an owner.\n- There can only be one owner at a time.\n- When the "
    "owner goes out of scope, the value will be dropped.\n\nVariable Scope\n\nNow that we’re "
    "past basic Rust syntax, we won’t include all the fn main() { code in the examples.",
)


def _ownership_hits() -> list[Hit]:
    """:data:`_OWNERSHIP` as retrieved: the rules' passage first."""
    definition, section, rules = _OWNERSHIP
    title = "What is Ownership? - The Rust Programming Language"
    return [
        Hit(id="own:c3", kind="chunk", score=0.9, text=rules, title=title),
        Hit(id="own:c0", kind="chunk", score=0.8, text=definition, title=title),
        Hit(id="own:c2", kind="chunk", score=0.7, text=section, title=title),
    ]


def test_what_names_the_asked_for_rules_brings_the_list_of_them() -> None:
    """ "What are the ownership rules in Rust?" quoted the definition ("Ownership is a set of
    rules that govern ...") and the two sentences after it; the rules are the list after
    "First, let's take a look at the ownership rules.", the last of it in the next passage."""
    hits = _ownership_hits()
    chosen = _ask("What are the ownership rules in Rust?", hits)
    at = chosen.index("- Each value in Rust has an owner.")
    assert chosen[at - 1].startswith("Keep these rules in mind"), chosen
    assert chosen[at + 1 : at + 3] == [
        "- There can only be one owner at a time.",
        "- When the owner goes out of scope, the value will be dropped.",
    ], chosen


def test_a_quoted_list_item_keeps_one_bullet() -> None:
    """The answer quoting the ownership rules read "- - Each value in Rust has an owner.": each
    quoted line's bullet and the item's own. The item is shown once, with one bullet."""
    hits = _ownership_hits()
    question = "What are the ownership rules in Rust?"
    pointed = pointed_at(frozenset(), (), identifiers(question))
    text, _ = extractive_answer(question, hits, [], _embedder(), prefer=pointed)
    lines = text.splitlines()
    assert not [ln for ln in lines if ln.startswith("- - ")], text
    for rule in (
        "Each value in Rust has an owner.",
        "There can only be one owner at a time.",
        "When the owner goes out of scope, the value will be dropped.",
    ):
        assert sum(ln.startswith(f"- {rule} [") for ln in lines) == 1, text


def _man(path: str) -> tuple[str, str]:
    text, title = roff_text(_read(Path(path)))
    return text, title or Path(path).name


def test_the_next_numbered_step_holding_the_question_words_follows() -> None:
    """postgresql-common's README.Debian: "How do I create a database user and a database ...?"
    quoted step 3 (the user), its command and "For details about the options, see
    createuser(1)."; step 4 ("Create a database ... owned by joe") is the rest of the answer."""
    text = _read(DOC / "postgresql-common/README.Debian.gz")
    start, end = text.find("2. Get a shell"), text.find("Cluster management")
    if min(start, end) < 0 or "4. Create a database" not in text:
        pytest.skip("another postgresql-common release")
    hit = Hit(id="readme:c2", kind="chunk", score=1.0, text=text[start:end], title="README")
    question = (
        "How do I create a database user and a database for my Unix account on Debian's PostgreSQL?"
    )
    chosen = _ask(question, [hit])
    assert chosen[0].startswith("3. In this postgres shell, create a database user"), chosen
    assert any(s.startswith("4. Create a database") for s in chosen), chosen
    assert any("createdb -O joe joework" in s for s in chosen), chosen


def test_a_code_the_question_names_leads_over_comment_lines() -> None:
    """PostgreSQL's errcodes.txt: "What does the SQLSTATE error code 40P01 mean?" quoted the
    file's comment lines ("SQLSTATE codes for errors.", three of the question's words); the
    line holding 40P01 (deadlock_detected) holds only the code."""
    path = Path("/usr/share/postgresql/15/errcodes.txt")
    text = _read(path)
    head, at = text.find("#      SQLSTATE codes for errors."), text.find("Section: Class 40")
    if min(head, at) < 0 or "40P01" not in text:
        pytest.skip("another PostgreSQL release")
    hits = [
        Hit(
            id="err:c22", kind="chunk", score=0.9, text=text[at - 200 : at + 900], title="errcodes"
        ),
        Hit(
            id="err:c2",
            kind="chunk",
            score=0.8,
            text=text[head - 800 : head + 700],
            title="errcodes",
        ),
    ]
    chosen = _ask("What does the SQLSTATE error code 40P01 mean?", hits)
    assert "40P01" in chosen[0] and "deadlock_detected" in chosen[0], chosen


def test_a_usage_line_is_no_answer_after_a_man_page_name_line() -> None:
    """savelog(8): "What does savelog do?" quoted the NAME line and the SYNOPSIS line
    ("savelog [-m mode] [-u user] ..."); the description's first sentence says what it does."""
    text, title = _man("/usr/share/man/man8/savelog.8.gz")
    if "The savelog command saves" not in text:
        pytest.skip("another savelog release")
    hit = Hit(id="savelog:c0", kind="chunk", score=1.0, text=text[:1200], title=title)
    chosen = _ask("What does savelog do?", [hit])
    assert chosen[0] == "savelog - save a log file", chosen
    assert chosen[1].startswith("The savelog command saves and optionally compresses"), chosen
    assert not any("[-m mode]" in s for s in chosen), chosen


def test_an_option_named_by_the_question_leads_over_the_name_line() -> None:
    """modprobe(8): "How do I remove a kernel module with modprobe?" quoted the NAME line ("Add
    and remove modules from the Linux Kernel", every word of the question) and a usage line; the
    "-r, --remove" option says how."""
    text, title = _man("/usr/share/man/man8/modprobe.8.gz")
    at = text.find("-r, --remove")
    if at < 0:
        pytest.skip("another modprobe release")
    hits = [
        Hit(id="modprobe:c0", kind="chunk", score=0.9, text=text[:1200], title=title),
        Hit(id="modprobe:c5", kind="chunk", score=0.8, text=text[at - 300 : at + 700], title=title),
    ]
    chosen = _ask("How do I remove a kernel module with modprobe?", hits)
    assert chosen[0].startswith("-r, --remove This option causes modprobe to remove"), chosen
    assert not any(s.startswith("modprobe [") for s in chosen), chosen


def test_a_sentence_referring_to_the_chosen_one_follows_it() -> None:
    """fakeroot's README.saving: "How can the fakeroot environment be saved for later use, and
    what is the problem with it?" quoted its first sentence and then a sentence of the man page
    on LD_PRELOAD (a linked entity's word); the next sentence, "This will not work perfectly,
    however.", says what the problem is."""
    saving = _read(DOC / "fakeroot/README.saving")
    man, title = _man("/usr/share/man/man1/fakeroot.1.gz")
    at = man.find("LD_PRELOAD")
    if at < 0 or "This will not work perfectly" not in saving:
        pytest.skip("another fakeroot release")
    hits = [
        Hit(id="saving:c0", kind="chunk", score=0.9, text=saving[:1500], title="README.saving"),
        Hit(id="man:c1", kind="chunk", score=0.8, text=man[at - 300 : at + 600], title=title),
    ]
    question = (
        "How can the fakeroot environment be saved for later use, and what is the problem with it?"
    )
    linked = ["Use", "LD_PRELOAD Fakeroot"]
    chosen = [s for s, _ in select_sentences(question, hits, _embedder(), entity_names=linked)]
    assert chosen[0].startswith("The fakeroot environment can be saved for later use"), chosen
    assert chosen[1] == "This will not work perfectly, however.", chosen


def test_a_quantity_question_starts_from_a_sentence_stating_one() -> None:
    """bzip2(1): "How much does bzip2 expand random data?" quotes "Random data ... giving an
    expansion of around 0.5%." first, not "bzip2 uses 32-bit CRCs ...": "bzip2" is a name, not a
    code the first sentence must hold, and "much" is how the question asks, no word to hold."""
    text, title = _man("/usr/share/man/man1/bzip2.1.gz")
    at = text.find("Random data")
    if at < 0:
        pytest.skip("another bzip2 release")
    hit = Hit(id="bzip2:c4", kind="chunk", score=1.0, text=text[at - 600 : at + 600], title=title)
    chosen = _ask("How much does bzip2 expand random data?", [hit])
    assert chosen[0].startswith("Random data") and "0.5%" in chosen[0], chosen


def test_a_quantity_is_quoted_for_a_question_asking_how_many() -> None:
    """errcodes.txt: "How many characters of an SQLSTATE code identify its class?" quoted "The SQL
    spec requires that all the elements of a SQLSTATE code be either digits or upper-case ASCII
    characters.", which states no number; "(the first two characters of the code value identify
    the class)" does."""
    text = _read(Path("/usr/share/postgresql/15/errcodes.txt"))
    head = text.find("#      SQLSTATE codes for errors.")
    if head < 0 or "the first two characters of the code value" not in text:
        pytest.skip("another PostgreSQL release")
    hits = [
        Hit(
            id="err:c2",
            kind="chunk",
            score=0.9,
            text=text[head - 800 : head + 700],
            title="errcodes",
        ),
        Hit(
            id="err:c3",
            kind="chunk",
            score=0.8,
            text=text[head + 500 : head + 2000],
            title="errcodes",
        ),
    ]
    chosen = _ask("How many characters of an SQLSTATE code identify its class?", hits)
    assert "the first two characters" in chosen[0], chosen
