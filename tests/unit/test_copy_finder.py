"""Near-duplicate passages (kgrag.executor.duplicates): what counts as a copy, the collapse that
keeps the best-ranked copy, the search that looks deeper for k distinct passages, and fusion
that ranks a passage once."""

from __future__ import annotations

from kgrag.agent.loop import fuse as fuse_iterations
from kgrag.core import Hit
from kgrag.executor.duplicates import (
    MAX_DEPTH,
    CopyFinder,
    collapse,
    copy_groups,
    nearest_distinct,
    shingles,
    until_distinct,
)
from kgrag.executor.fusion import fuse

#: Eight sentences of Valgrind's Massif manual, as its HTML page and its PDF print them.
SENTENCES = [
    "Massif is a heap profiler.",
    "It measures how much heap memory your program uses.",
    "This includes both the useful space, and the extra bytes allocated for book-keeping and "
    "alignment purposes.",
    "It can also measure the size of your program's stack(s), although it does not do so by "
    "default.",
    "Heap profiling can help you reduce the amount of memory your program uses.",
    "On modern machines with virtual memory, this provides the following benefits:",
    "It can speed up your program -- a smaller program will interact better with your "
    "machine's caches and avoid paging.",
    "If your program uses lots of memory, it will reduce the chance that it exhausts your "
    "machine's swap space.",
]
OTHER = (
    "Cachegrind simulates how your program interacts with a machine's cache hierarchy and "
    "(optionally) branch predictor. It simulates a machine with independent first-level "
    "instruction and data caches (I1 and D1), backed by a unified second-level cache (L2)."
)


def _hit(i: str, text: str, document: str, score: float = 0.5, kind: str = "chunk") -> Hit:
    return Hit(id=i, kind=kind, score=score, text=text, document_id=document)  # type: ignore[arg-type]


def _pdf(text: str) -> str:
    """The same words as a PDF page prints them: lines cut, a running header, hyphenation
    where the words allow."""
    return "Massif: a heap profiler\n" + text.replace(". ", ".\n").replace(
        "book-keeping", "book-\nkeeping"
    )


def test_shingles_ignore_case_punctuation_and_layout() -> None:
    assert shingles("Massif is a HEAP profiler!") == shingles("massif\nis a heap,  profiler")
    assert shingles("three short words") == frozenset({("three", "short", "words")})
    assert shingles(" ... ") == frozenset()
    assert shingles("one two three four five six") == frozenset(
        {("one", "two", "three", "four", "five"), ("two", "three", "four", "five", "six")}
    )


def test_the_same_passage_in_two_formats_is_a_copy() -> None:
    html = _hit("h", " ".join(SENTENCES), "manual.html")
    pdf = _hit("p", _pdf(" ".join(SENTENCES)), "manual.pdf")
    assert CopyFinder().are_copies(html, pdf)


def test_a_copy_cut_at_other_places_is_still_a_copy() -> None:
    # the PDF's chunk starts one sentence later and runs one sentence further (an other page
    # break): the shorter is contained in the other, their union is larger than either
    html = _hit("h", " ".join(SENTENCES[:7]), "manual.html")
    pdf = _hit("p", _pdf(" ".join(SENTENCES[1:8])), "manual.pdf")
    assert CopyFinder().are_copies(html, pdf)


def test_passages_sharing_half_their_text_are_distinct() -> None:
    first = _hit("a", " ".join(SENTENCES[:6]), "manual.html")
    shifted = _hit("b", " ".join([*SENTENCES[3:], OTHER]), "manual.pdf")
    assert not CopyFinder().are_copies(first, shifted)


def test_passages_of_one_document_are_never_copies() -> None:
    # the chunker repeats the end of a chunk at the start of the next one by design
    a = _hit("a", " ".join(SENTENCES), "manual.html")
    b = _hit("b", " ".join(SENTENCES), "manual.html")
    assert not CopyFinder().are_copies(a, b)


def test_only_text_passages_are_copies() -> None:
    a = _hit("a", "a photo of a red circle", "a.png", kind="image")
    b = _hit("b", "a photo of a red circle", "b.png", kind="image")
    assert not CopyFinder().are_copies(a, b)
    assert not CopyFinder().are_copies(_hit("c", "", "c.txt"), _hit("d", "", "d.txt"))


def _ranking() -> list[Hit]:
    """A PDF passage, its HTML copy, a distinct passage, the PDF's copy of it, a third one."""
    return [
        _hit("pdf1", _pdf(" ".join(SENTENCES)), "manual.pdf", 0.9),
        _hit("html1", " ".join(SENTENCES), "manual.html", 0.8),
        _hit("other", OTHER, "cg.html", 0.7),
        _hit("pdf2", OTHER.upper(), "manual.pdf", 0.6),
        _hit("third", "Callgrind records the call history among functions.", "cl.html", 0.5),
    ]


def test_collapse_keeps_the_best_ranked_copy_carrying_the_others() -> None:
    out = collapse(_ranking())
    assert [h.id for h in out] == ["pdf1", "other", "third"]
    assert [c.id for c in out[0].copies] == ["html1"]
    assert [c.id for c in out[1].copies] == ["pdf2"]
    assert out[2].copies == ()
    assert [h.id for h in collapse(_ranking(), 2)] == ["pdf1", "other"]
    assert [h.id for c in out for h in c.and_copies()] == [
        "pdf1",
        "html1",
        "other",
        "pdf2",
        "third",
    ]


def test_collapse_drops_a_repeated_hit() -> None:
    hits = _ranking()
    assert [h.id for h in collapse([hits[2], hits[2], hits[4]])] == ["other", "third"]


def test_a_search_keeps_its_copies_in_place_down_to_the_kth_passage() -> None:
    assert [h.id for h in until_distinct(_ranking(), 2)] == ["pdf1", "html1", "other", "pdf2"]
    assert [h.id for h in until_distinct(_ranking(), 3)] == [h.id for h in _ranking()]


def test_the_search_looks_deeper_until_it_finds_k_distinct_passages() -> None:
    ranking = _ranking()
    asked: list[int] = []

    def fetch(n: int) -> list[Hit]:
        asked.append(n)
        return ranking[:n]

    assert [h.id for h in nearest_distinct(fetch, 2)] == ["pdf1", "html1", "other", "pdf2"]
    assert asked == [2, 8]  # 2 hits held one passage; 8 asked, 5 there: all the index holds
    asked.clear()
    assert [h.id for h in nearest_distinct(fetch, 1)] == ["pdf1"]
    assert asked == [1]  # one passage asked, one found: no deeper search


def test_the_search_looks_no_deeper_than_max_depth() -> None:
    copies = [_hit(f"c{i}", " ".join(SENTENCES), f"copy{i}.txt") for i in range(1000)]
    asked: list[int] = []

    def fetch(n: int) -> list[Hit]:
        asked.append(n)
        return copies[:n]

    assert len(nearest_distinct(fetch, 10)) == MAX_DEPTH
    assert asked[-1] == MAX_DEPTH


def test_fusion_ranks_a_passage_once_where_its_best_copy_stands() -> None:
    dense = _ranking()
    lexical = [dense[1], dense[4]]  # the HTML copy first
    groups = copy_groups([*dense, *lexical])
    fused = fuse([dense, lexical], weights=[1.0, 1.0], rrf_k=60, groups=groups)
    scores = {h.id: round(v, 6) for h, v in fused}
    # copies take no rank: "other" is the dense ranking's second passage, "third" its third
    assert scores == {
        "pdf1": round(1 / 61 + 1 / 61, 6),
        "other": round(1 / 62, 6),
        "third": round(1 / 63 + 1 / 62, 6),
    }
    # with the lexical ranking weighing more, its copy (the HTML page) stands for the passage
    heavy = fuse([dense, lexical], weights=[1.0, 3.0], rrf_k=60, groups=groups)
    assert heavy[0][0].id == "html1"


def test_without_groups_fusion_is_unchanged() -> None:
    dense = _ranking()
    fused = fuse([dense, [dense[1]]], rrf_k=60)
    assert [h.id for h, _ in fused] == ["html1", "pdf1", "other", "pdf2", "third"]


def test_the_evidence_of_iterations_holds_each_passage_once() -> None:
    hits = _ranking()
    assert [h.id for h in fuse_iterations([hits], 10)] == ["pdf1", "other", "third"]
    fused = fuse_iterations([hits[:2], [hits[1], hits[4]]], 10)
    assert [h.id for h in fused] == ["pdf1", "third"]
    assert [c.id for c in fused[0].copies] == ["html1"]
