"""Synthesis: the answer text and its numbered citations, every citation pointing at evidence the
trace returned.

- Offline (:func:`extractive_answer`): the best-supported sentences of the evidence, quoted, each
  with its marker and source, and a first line saying the answer is extractive. Sentences are
  chosen greedily as a chain: the first answers most of the question; each next one must cover a
  key term or entity of the question not covered yet, preferring sentences that share a term with
  what was already chosen (the bridge of a multi-hop question: the part the meeting named, then who
  maintains that part), or be the next sentence of a chosen one sharing a term with it. Sentences
  with no support from the question's key terms or entities are never chosen. The first sentence
  holds at most one fewer of the question's own words than the sentence that holds most (a linked
  entity's other words count half; a list run together into one long "sentence" pro rata), and of
  those one holding what the question asks for (:mod:`kgrag.agent.asked`: "licenses", "ownership
  rules") with as much of the rest of the question as any, read under its document's title; a
  document's title gives way to a line that, read under its own document's title, holds more of the
  question; a heading over nothing (a contents entry, a run of headings) and a sentence writing the
  question's version as another release's ("1.07" in "from 1.07 to 1.07.1") do not start the chain.
  A heading, a title, a line announcing a list or a sentence that only restates the question brings
  what it introduces, and that section goes on; a list a colon announces comes with its items.
  A man page's NAME line leads only a question asking what the program is or does, and its usage
  lines ("savelog [-m mode] ...") are never quoted, what follows the name line being read past
  them; an option named by one of the question's words ("-r, --remove" for "How do I remove
  ...?") leads; a code the question names ("40P01") is held by the first sentence; a question
  asking for a quantity (:mod:`kgrag.agent.quantity`) starts from a sentence stating one, read
  under its document's title ("Number of Instances: 20640"). The next numbered step of a chosen
  step holding the question's words too ("4. Create a database ..." after "3. ... create a
  database user ...") and a sentence referring back to a chosen one by its first word ("This
  will not work perfectly, however.") continue the chain.
  Contents lines (dot leaders) are no sentences; an underlined heading is one of its own.
- With an LLM (:func:`llm_answer`): the model answers from numbered evidence and cites ``[n]``;
  markers that point at no evidence are dropped, the rest renumbered in order of appearance.

Both end with a ``Sources:`` list (``[1] (Source: file, p. 4)`` / ``(Source: file, 00:12–00:19)``)
and embed cited images as Markdown ``![alt](uri)`` with a non-empty alt text.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from pathlib import PurePath, PurePosixPath
from typing import TYPE_CHECKING

import numpy as np

from kgrag.agent.answer import Citation
from kgrag.agent.asked import asked_for, names_phrase
from kgrag.agent.markdown_guard import guard_links
from kgrag.agent.quantity import QUANTITY_WORDS, asks_quantity, states_quantity
from kgrag.core import Hit
from kgrag.llm.prompts import render_prompt
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.rule import identifiers
from kgrag.text import is_numbered_heading, sentence_texts, terms
from kgrag.text.file_names import file_name_title, file_words
from kgrag.text.versions import is_version

if TYPE_CHECKING:
    from kgrag.llm import LLM, ChatResult

log = logging.getLogger(__name__)

EXTRACTIVE_HEADER = (
    "Extractive answer (no LLM configured; these are the best-supported sentences "
    "of the evidence, quoted):"
)
NO_EVIDENCE = "I found no evidence you are allowed to read that answers this question."
SOURCES_HEADER = "Sources:"
#: A longer title (a text file's first line) is replaced by the file name in source labels.
MAX_TITLE_CHARS = 60


def source_label(hit: Hit | Citation) -> str:
    """ "(Source: file, p. 4)" / "(Source: file, 00:12–00:19)" / "(Source: file, sheet Q, row 3)"
    / "(Source: file, p. 2, table 1, row 3)"."""
    node_id = hit.id if isinstance(hit, Hit) else hit.node_id
    file_name = hit.uri.rsplit("/", 1)[-1] if hit.uri else None
    # brackets would read as the label's own or a marker: "changelog (jq)" is "changelog jq",
    # a man page's "zstd(1)" "zstd 1" (not "zstd1")
    title = " ".join(re.sub(r"[()\[\]]", " ", hit.title or "").split())
    stem = PurePosixPath(file_name).stem if file_name else None
    if file_name and title in (stem, file_name_title(stem or "")):
        # titled by its file name (as ingestion reads it, or as an older store holds it): cited
        # by it whole ("roster.md", "nnapi_supported_ops.md")
        title = file_name
    name = (
        title if title and len(title) <= MAX_TITLE_CHARS else (file_name or title[:60] or node_id)
    )
    if hit.start_s is not None and hit.end_s is not None:
        return f"(Source: {name}, {_clock(hit.start_s)}–{_clock(hit.end_s)})"
    if hit.row is not None:
        return f"(Source: {name}, {table_place(hit.page, hit.table, hit.sheet, hit.row)})"
    if hit.page is not None:
        return f"(Source: {name}, p. {hit.page})"
    return f"(Source: {name})"


def table_place(page: int | None, table: int | None, sheet: str | None, row: int | None) -> str:
    """Where a table row is: "sheet Sales, row 3" / "p. 2, table 1, row 3"."""
    parts = []
    if sheet is not None:
        parts.append(f"sheet {sheet}")
    else:
        if page is not None:
            parts.append(f"p. {page}")
        if table is not None:
            parts.append(f"table {table}")
    if row is not None:
        parts.append(f"row {row}")
    return ", ".join(parts)


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 60:02d}:{s % 60:02d}"


def alt_text(hit: Hit | Citation) -> str:
    """A non-empty alt text for an image: caption, else title, else file name, else "Image";
    capitalised (a lowercase ``[word]`` is also what console markup takes for a style tag)."""
    caption = (hit.text if isinstance(hit, Hit) else hit.excerpt) or hit.title
    if not caption:
        uri = hit.image_uri or hit.uri
        caption = PurePath(uri).stem.replace("_", " ") if uri else ""
    caption = re.sub(r"[_\[\]\n]+", " ", caption or "").strip()
    return caption[:1].upper() + caption[1:] if caption else "Image"


def image_markdown(hit: Hit | Citation, marker: int) -> str:
    return f"![{alt_text(hit)}]({hit.image_uri or hit.uri}) [{marker}]"


def citation_for(marker: int, hit: Hit) -> Citation:
    return Citation(
        marker=marker,
        document_id=hit.document_id,
        title=hit.title,
        uri=hit.uri,
        page=hit.page,
        start_s=hit.start_s,
        end_s=hit.end_s,
        table=hit.table,
        sheet=hit.sheet,
        row=hit.row,
        node_id=hit.id,
        kind=hit.kind,
        image_uri=hit.image_uri,
        excerpt=(hit.text or "")[:300] or None,
        section=hit.section,
        authors=hit.authors,
    )


def sources_block(citations: Sequence[Citation]) -> str:
    lines = [f"[{c.marker}] {source_label(c)}" for c in citations]
    return SOURCES_HEADER + "\n" + "\n".join(lines) if lines else ""


# --------------------------------------------------------------------------------- offline

#: Sentences are chosen from this many best hits. Every candidate sharing a key term with the
#: question is embedded (the cost of the offline answer); on 50 MuSiQue questions the best 6 of
#: 10 hits gave the same answers for 35 and cited as many gold passages within one (0.577 of
#: 0.583), at half the embedding. A passage's copies in other files (kgrag.executor.duplicates)
#: count as hits here: each costs its sentences' embedding.
SENTENCE_HITS = 6


#: A question's term that only a linked entity's name holds counts this much of one the
#: question says: the entity may be linked by one shared word. Set a priori.
ENTITY_TERM_WEIGHT = 0.5
#: The first sentence holds at most this many fewer of the question's own terms than the
#: candidate that holds most. Set a priori.
FEWER_TERMS = 1
#: A "sentence" longer than this many words is a list run together (a changelog release, a
#: PDF page without full stops): its terms are matched pro rata. Set a priori.
SENTENCE_WORDS = 40


@dataclass(frozen=True)
class _Candidate:
    sentence: str
    hit: Hit
    rank: int
    position: int
    terms: frozenset[str]
    #: a heading or title line: it says what follows, not the answer
    label: bool = False
    #: where else the same sentence is, (hit id, position): overlapping chunks repeat it, and
    #: what follows it there follows it here ("... rules in mind:" at a chunk's end, the list
    #: it announces at the start of the next chunk, quoted from there)
    also: tuple[tuple[str, int], ...] = ()

    def places(self) -> list[tuple[str, int]]:
        return [(self.hit.id, self.position), *self.also]


def select_sentences(
    question: str,
    evidence: Sequence[Hit],
    embedder: TextEmbedder,
    *,
    entity_names: Sequence[str] = (),
    prefer: Callable[[Hit], bool] | None = None,
    max_sentences: int = 3,
) -> list[tuple[str, Hit]]:
    """The chain of evidence sentences that best answers ``question`` (see the module doc).
    ``prefer``: the hits the question points at (a recording's segments, a named file's
    passages), whose sentences start the chain when one can."""
    preferred_hit = prefer or (lambda _hit: False)
    subject = defined_subject(question)
    versions = [v for v in identifiers(question) if is_version(v)]
    codes = [v for v in identifiers(question) if is_code(v) and not is_version(v)]
    # a passage's copies in other files (the same text as HTML and PDF) come right after it:
    # one format may cut its sentences better (a PDF joins lines a web page keeps apart), and a
    # sentence quoted from a copy cites that copy's file; each is read as one more hit
    hits = [h for found in evidence for h in found.and_copies()]
    quantity = asks_quantity(question)
    # "how many", "how much": what is asked, not words a sentence answering holds ("as many
    # processes as possible" says no number)
    own = (set(terms(question)) - (QUANTITY_WORDS if quantity else set())) | set(versions)
    asked = tuple(t for t in asked_for(question) if t in own)
    wanted = set(own)
    for name in entity_names:
        wanted.update(terms(name))

    def gather(depth: int) -> list[_Candidate]:
        """The sentences of the first ``depth`` hits, and a definition of what the question
        asks about in any hit ("jq is a lightweight ... JSON processor." below them)."""
        found: list[_Candidate] = []
        seen: dict[str, int] = {}
        for rank, hit in enumerate(hits if subject is not None else hits[:depth]):
            for position, (sentence, label) in enumerate(passage_sentences(hit)):
                if sentence in seen:
                    at = seen[sentence]
                    found[at] = replace(found[at], also=(*found[at].also, (hit.id, position)))
                elif rank < depth or (subject is not None and defines(sentence, subject)):
                    seen[sentence] = len(found)
                    named = {v for v in versions if tells_version(sentence, v)}
                    found.append(
                        _Candidate(
                            sentence,
                            hit,
                            rank,
                            position,
                            frozenset(terms(sentence)) | named,
                            label or is_title(sentence, hit),
                        )
                    )
        return found

    candidates = gather(SENTENCE_HITS)

    def shares(c: _Candidate) -> bool:
        return bool(c.terms & wanted) or (subject is not None and defines(c.sentence, subject))

    if len(hits) > SENTENCE_HITS and not any(shares(c) for c in candidates):
        # no sentence of the first hits holds a key term of the question ("What is Helgrind?"
        # over manual pages that never name it): the rest of the evidence is read before the
        # closest of them is quoted
        candidates = gather(len(hits))
    if not candidates:
        return []
    defining = [i for i, c in enumerate(candidates) if subject and defines(c.sentence, subject)]
    favoured = [preferred_hit(c.hit) for c in candidates]
    bonus = [0.15 if f else 0.0 for f in favoured]
    supported = [i for i, c in enumerate(candidates) if c.terms & wanted or i in defining]
    semantic = _Similarity(question, candidates, embedder)
    if not supported:  # nothing shares a key term: the single closest sentence, no chain
        # (of the preferred kind when there is one: "what is said in the recording?")
        pool = [i for i in range(len(candidates)) if favoured[i]]
        pool = pool or list(range(len(candidates)))
        semantic.need(pool)
        best = max(pool, key=lambda i: semantic[i])
        return [(candidates[best].sentence, candidates[best].hit)]
    # only sentences that can be chosen are embedded: those sharing a key term now, the ones
    # right after a chosen sentence when the chain looks for its continuation
    semantic.need(supported)

    # a linked entity's other words ("Sparc Ultra 10" for "--ultra") count less
    weight = {t: 1.0 if t in own else ENTITY_TERM_WEIGHT for t in wanted}

    def run_on(i: int) -> float:
        """1, or less for a list run together: the share of it a sentence's length holds."""
        return min(1.0, SENTENCE_WORDS / max(1, len(candidates[i].sentence.split())))

    def matched(i: int, found: AbstractSet[str]) -> float:
        """How much of the question the terms ``found`` in candidate ``i`` say, pro rata in a
        list run together."""
        return sum(weight[t] for t in found) * run_on(i)

    def first_score(i: int) -> float:
        c = candidates[i]
        lexical = matched(i, set(c.terms & wanted)) / (1 + len(wanted))
        return float(semantic[i]) + 0.5 * lexical + 0.1 / (1 + c.rank) + bonus[i]

    def leads_in(i: int) -> bool:
        """A heading, a title, a sentence announcing what follows, or one that only restates
        the question's words ("Changes in bc from 1.06 to 1.07." for "What changed in bc
        1.07?"): what it introduces is the answer."""
        c = candidates[i]
        return c.label or introduces(c.sentence) or (bool(c.terms) and c.terms <= wanted)

    # "What is jq?": a sentence saying what it is ("jq is a lightweight ... JSON processor.")
    # answers it before any sentence that merely names it. A heading that introduces no
    # sentence (a contents entry, a heading over headings, a chunk's last line) answers
    # nothing: it starts the chain only when nothing else can
    def answers_nothing(i: int) -> bool:
        return leads_in(i) and _introduced(candidates, i) is None

    def other_release(i: int) -> bool:
        """A sentence that writes the version the question names only as part of another
        ("1.07" in "1.07.1", "libpng-1.6.39.tar.gz") or as where a range of changes starts
        ("from 1.07 to 1.07.1"): it is about another release."""
        s = candidates[i].sentence
        return any(v in s and not names_version(s, v) for v in versions)

    # of those, one saying what kind of thing it is ("Nettle is a cryptographic library ...")
    # before one saying what it is like ("Nettle is dual licenced under ...")
    kinds = [i for i in defining if subject and defines_kind(candidates[i].sentence, subject)]
    first_pool = (
        kinds
        or defining
        or [i for i in supported if not answers_nothing(i) and not other_release(i)]
        or supported
    )
    # a man page's name line ("modprobe - Add and remove modules from the Linux Kernel") says
    # what the program is: it leads only when that is asked ("What does savelog do?"), and a
    # usage line ("savelog [-m mode] [-u user] ...") never does
    if subject is None:
        first_pool = [i for i in first_pool if not name_line(candidates[i])] or first_pool
    first_pool = [i for i in first_pool if not is_synopsis(candidates[i].sentence)] or first_pool
    # a code the question names ("40P01") is what a sentence answering it holds, however few
    # of the question's other words it has ("SQLSTATE codes for errors." has three)
    if codes:
        coded = [i for i in first_pool if set(codes) <= candidates[i].terms]
        first_pool = coded or first_pool
    preferred = [i for i in first_pool if favoured[i]] or first_pool

    # the first sentence says much of what the question asks: not only the words every
    # passage shares ("zstd", "compression" for "maximum ... level with --ultra"), however
    # near in meaning a sentence with fewer of them is. A quantity is often stated on a label
    # line ("Number of Instances: 20640") that holds the rest of the question in its document's
    # title ("California Housing dataset"): for a question asking one, the title counts too
    def held(i: int) -> set[str]:
        c = candidates[i]
        if not quantity:
            return set(c.terms & own)
        return set(c.terms | set(terms(c.hit.title or ""))) & own

    # a sentence that holds, of the question's words, only those naming its own file
    # ("https://github.com/google/double-conversion" in ``double-conversion README.md``, for
    # "Which build tools can double-conversion be built with?") says nothing the question asks
    # of that file: one saying something leads
    saying = [i for i in preferred if not names_only_document(candidates[i], own)]
    preferred = saying or preferred
    holds = {i: matched(i, held(i)) for i in preferred}
    most = max(holds.values())
    preferred = [i for i in preferred if holds[i] >= most - FEWER_TERMS]
    # an option named by the question's own word ("-r, --remove This option causes modprobe to
    # remove ..." for "How do I remove a kernel module with modprobe?") is how to do it
    optioned = [i for i in preferred if names_option(candidates[i].sentence, own)]
    preferred = optioned or preferred
    # a question asking how many, how much, how long ... is answered by a sentence stating a
    # quantity ("Number of Instances: 20640"), not by one describing the data set's columns
    if quantity:
        counted = [i for i in preferred if states_quantity(candidates[i].sentence, question)]
        preferred = counted or preferred
    # of those, one that holds what the question asks for ("Under which licenses is kmod
    # released?": the "License:" line, not the lines that only name kmod, as every line of
    # its README does) and as much of the rest of the question as any, read under its own
    # document's title (kmod's README); of those, one that names it as the question does
    # ("the ownership rules", not "a set of rules that govern ... ownership"). A sentence
    # holding only what is asked for ("The airport is owned by the City of Winner." for "the
    # airport in the city where WILM is licensed") gives way to those naming the rest
    if asked:

        def rest(i: int) -> float:
            c = candidates[i]
            held = (c.terms | set(terms(c.hit.title or ""))) & own
            return sum(weight[t] for t in held if t not in asked)

        fullest = max(rest(i) for i in preferred)
        asking = [i for i in preferred if asked[-1] in candidates[i].terms]
        preferred = [i for i in asking if rest(i) >= fullest] or preferred
        phrased = [
            i
            for i in preferred
            if names_phrase(candidates[i].sentence, asked) and rest(i) >= fullest
        ]
        preferred = (len(asked) > 1 and phrased) or preferred
    if log.isEnabledFor(logging.DEBUG):
        for i in sorted(preferred, key=first_score, reverse=True)[:10]:
            log.debug("first %.3f %r", first_score(i), candidates[i].sentence[:120])
    first = max(preferred, key=first_score)
    if is_title(candidates[first].sentence, candidates[first].hit):
        # a document's title names what all of it is about: a sentence that, read under its
        # own document's title, holds more of the question leads instead ("Changes from
        # version 1.6.38 to version 1.6.39" under "libpng 1.6.39 - November 20, 2022";
        # "Quick Install" under "WebCScope Installation")
        def context(i: int) -> set[str]:
            c = candidates[i]
            return set(c.terms | set(terms(c.hit.title or ""))) & own

        better = [j for j in preferred if context(j) > context(first)]
        if better:  # of those, the ones that hold the most of the question
            most = max(sum(weight[t] for t in context(j)) for j in better)
            better = [j for j in better if sum(weight[t] for t in context(j)) >= most]
            first = max(better, key=first_score)
    chosen = [first]
    covered = set(candidates[chosen[0]].terms & wanted)
    brought: set[int] = set()  # sentences chosen as what a heading introduces, and what follows
    while len(chosen) < max_sentences:
        if leads_in(chosen[-1]):
            # a heading alone answers nothing ("CORE CHANGES", "Installation"), nor a sentence
            # announcing a list ("Cscope is designed to answer questions like:"): what it
            # introduces comes next, past the headings under it ("Installation", "Quick Install")
            introduced = _introduced(candidates, chosen[-1])
            if introduced is not None and introduced not in chosen:
                chosen.append(introduced)
                brought.add(introduced)
                covered |= candidates[introduced].terms & wanted
                continue
        if len(asked) > 1 and names_phrase(candidates[chosen[-1]].sentence, asked):
            # what names the asked-for thing ("First, let's take a look at the ownership
            # rules.") and is followed by a sentence announcing a list ("Keep these rules in
            # mind ...:"): the list is the answer
            announcing = [
                j
                for j in _followers(candidates, chosen[-1:])
                if j not in chosen and candidates[j].sentence.rstrip().endswith(":")
            ]
            if announcing:
                chosen.append(announcing[0])
                continue
        bridge = set().union(*(candidates[j].terms for j in chosen)) - wanted
        # what follows a chosen sentence, past usage lines (a man page's name line, then its
        # synopsis, then what the program does)
        follows = {
            (h, p + 1 + k): j
            for j in chosen
            for h, p in candidates[j].places()
            for k in range(_usage_lines_after(candidates, h, p) + 1)
        }
        steps = _next_steps(candidates, chosen)
        semantic.need([*_followers(candidates, chosen), *steps])
        best_i, best_score = -1, -1.0
        for i, c in enumerate(candidates):
            if i in chosen or is_title(c.sentence, c.hit):  # names a document, says nothing
                continue
            if is_synopsis(c.sentence):  # a usage line: the options, not what they do
                continue
            new = (c.terms & wanted) - covered
            links = c.terms & bridge
            before = next((follows[p] for p in c.places() if p in follows), None)
            # the next step of a chosen numbered step that holds the question's words too
            # ("3. ... create a database user ...:", then "4. Create a database ...:" for "How
            # do I create a database user and a database?"): the question asks for both
            step = i in steps and bool(c.terms & candidates[steps[i]].terms & wanted)
            continues = (
                before is not None
                and not c.label
                and (
                    # "Installation": what follows says it (unless it is a heading too), and
                    # the section it heads goes on ("Added void functions.", "Bug fixes: ...")
                    (
                        (introduces(candidates[before].sentence) or before in brought)
                        and not is_heading(c.sentence)
                    )
                    or (bool(c.terms & candidates[before].terms) and len(c.terms) >= 3)
                )
            )
            # a sentence saying what the answer's first one does ("This will not work
            # perfectly, however." after "The fakeroot environment can be saved ... -s
            # option"): linked to it by its first word, as a bridge term would link it
            refers = before == chosen[0] and not c.label and bool(_REFERS_BACK.match(c.sentence))
            if not new and not continues and not step and not refers:
                continue
            score = (
                sum(weight[t] for t in new) / max(1, len(wanted))
                + (0.4 if links or refers else 0.0)
                + (0.5 if step else 0.0)
                + 0.3 * float(semantic[i])
                + bonus[i]
            )
            if score > best_score:
                best_i, best_score = i, score
        if best_i < 0:
            break
        places = candidates[best_i].places()
        before = next((follows[p] for p in places if p in follows), None)
        if before is not None and before in brought:
            brought.add(best_i)
        chosen.append(best_i)
        covered |= candidates[best_i].terms & wanted
    # the answer does not stop on a sentence that announces what follows ("Lsof can list for
    # you all the network socket files open on your machine with:"): what it announces (the
    # command) comes too, past the cap
    if introduces(candidates[chosen[-1]].sentence):
        announced = _introduced(candidates, chosen[-1])
        if announced is not None and announced not in chosen:
            chosen.append(announced)
    return [(candidates[i].sentence, candidates[i].hit) for i in _with_lists(candidates, chosen)]


#: A code the question names: letters and digits mixed, mostly digits ("40P01", "E021-04").
_CODE = re.compile(r"(?=[\w-]*\d)(?=[\w-]*[a-z])[a-z\d]+(?:-[a-z\d]+)*")


def names_only_document(candidate: _Candidate, own: AbstractSet[str]) -> bool:
    """Whether the question's terms ``own`` that ``candidate`` holds, if any, all name its file:
    words of the file's name (``double-conversion README.md``). Not its title: a title is often the
    passage's own first line or heading ("locales", "Building"), words the answer holds too."""
    return candidate.terms & own <= set(terms(file_words(candidate.hit.uri)))


def is_code(identifier: str) -> bool:
    """Whether ``identifier`` (lower case, from :func:`~kgrag.planner.rule.identifiers`) is a
    code: letters and digits mixed, at least as many digits as letters ("40p01", "e021-04"); not
    a name written with a digit ("bzip2", "e2fsck") or in code (``node_exporter``), which every
    passage of its documentation names."""
    digits = sum(c.isdigit() for c in identifier)
    return bool(_CODE.fullmatch(identifier)) and digits >= sum(c.isalpha() for c in identifier)


#: A man page's title: its name and section ("savelog(8)", "modprobe(8)").
_MAN_TITLE = re.compile(r"(?P<name>[\w.+-]+)\(\d\w*\)")


def name_line(candidate: _Candidate) -> bool:
    """Whether ``candidate`` is its man page's NAME line ("savelog - save a log file" in
    savelog(8)): it says what the program is, not how to do anything with it."""
    m = _MAN_TITLE.fullmatch((candidate.hit.title or "").strip())
    return m is not None and defines_kind(candidate.sentence, m.group("name").lower())


#: A bracketed option in a usage line ("[-m mode]", "[--dump-modversions]", "[-1 ..").
_BRACKETED = re.compile(r"\[[^\]]*\]?")
#: At most this many words outside the brackets of a usage line (its command, "file ...").
USAGE_WORDS = 3


def is_synopsis(sentence: str) -> bool:
    """A man page's usage line ("savelog [-m mode] [-u user] ... file ..."), or its wrapped
    rest ("-9] [-C] [-d] ..."): bracketed options and a few words, no sentence."""
    end = sentence.rstrip()
    if "[" not in sentence or (end.endswith((".", ":")) and not end.endswith("..")):
        return False
    rest = _BRACKETED.sub(" ", sentence)
    return len([w for w in rest.split() if w.strip(".]")]) <= USAGE_WORDS


#: An option entry's start: "-r, --remove", "--remove", "- --ultra:" (a list item).
_OPTION = re.compile(r"\s*(?:[-*]\s+)?(?:-\w,\s*)?--(?P<long>[a-z][\w-]*)", re.IGNORECASE)


def names_option(sentence: str, own: AbstractSet[str]) -> bool:
    """Whether ``sentence`` is an option's entry whose long name is one of the question's
    words ("-r, --remove This option causes ..." for "How do I remove a module?")."""
    m = _OPTION.match(sentence)
    return m is not None and bool(set(terms(m.group("long").replace("-", " "))) & own)


def _usage_lines_after(candidates: Sequence[_Candidate], hit_id: str, position: int) -> int:
    """How many usage lines (:func:`is_synopsis`) follow ``position`` in hit ``hit_id``."""
    at = {p: c.sentence for c in candidates for h, p in c.places() if h == hit_id}
    n = 0
    while position + 1 + n in at and is_synopsis(at[position + 1 + n]):
        n += 1
    return n


#: A sentence that refers to the one before it by its first word (a possessive too: "Its
#: purpose is to ..." after "Libidn2 is a ... implementation of IDNA2008 ...").
_REFERS_BACK = re.compile(
    r"(?:this|that|these|those|it|its|their|such)\b(?!\s*(?:is|are)\s+(?:a|an|the)\b)",
    re.IGNORECASE,
)

#: A numbered step: "3. In this postgres shell, ...", "4) ...".
_STEP = re.compile(r"\s*(?P<n>\d{1,2})[.)]\s+\S")


def _next_steps(candidates: Sequence[_Candidate], chosen: Sequence[int]) -> dict[int, int]:
    """The candidates that are the next numbered step ("4. Create a database ...") of a chosen
    step ("3. In this postgres shell, create a database user ...:") later in the same hit,
    each with the step it follows."""
    out: dict[int, int] = {}
    for j in chosen:
        m = _STEP.match(candidates[j].sentence)
        if m is None:
            continue
        places = dict(candidates[j].places())
        for i, c in enumerate(candidates):
            n = _STEP.match(c.sentence)
            if n is None or int(n.group("n")) != int(m.group("n")) + 1:
                continue
            if any(h in places and p > places[h] for h, p in c.places()):
                out.setdefault(i, j)
    return out


def _with_lists(candidates: Sequence[_Candidate], chosen: Sequence[int]) -> list[int]:
    """``chosen`` with each announced list quoted with its items, past the cap: after the
    first item of a list right after the sentence announcing it ("Keep these rules in mind
    ...:", "- Each value in Rust has an owner."), the items that follow it."""
    out: list[int] = []
    for n, i in enumerate(chosen):
        if i in out:
            continue
        out.append(i)
        announcing = candidates[chosen[n - 1]].sentence if n else ""
        if announcing.rstrip().endswith(":") and not _siblings(announcing, candidates[i].sentence):
            out += [j for j in _list_items(candidates, i) if j not in out]
    return out


#: A contents or index line: a dot leader to a page number ("9.2.9. Acting on Massif's
#: Information ........ 158", "Porting . . . . . . 1").
_DOT_LEADER = re.compile(r"(?:\.\s?){5,}")
#: A heading underlined on the next line ("Background" over "==========", a Markdown or
#: reStructuredText section), the text after the rule being the section's first sentence
#: (sentence splitting joins lines with no full stop between them).
_RULE = re.compile(r"={3,}|-{3,}|~{3,}")
_UNDERLINED = re.compile(
    rf"(?P<heading>.*?\w.*?)\s+(?P<rule>{_RULE.pattern})(?:\s+(?P<rest>\S.*))?"
)
#: Shorter pieces of a passage are fragments, not sentences (sentence_texts' own floor) ...
MIN_SENTENCE_CHARS = 12
#: ... but for what a colon announces, and a command after a shell prompt ("$ lsof -i").
_COMMAND = re.compile(r"[$%] \S")


def passage_sentences(hit: Hit) -> list[tuple[str, bool]]:
    """The sentences of a passage, each with whether it is a heading underlined by a rule
    (kept apart from the sentence after it, without its rule); contents lines left out."""
    out: list[tuple[str, bool]] = []
    announced = False  # the piece before ends in a colon: what it announces comes next
    listing = False  # the piece before is an item of an announced list
    for sentence in sentence_texts(hit.text or "", min_chars=1):
        after_colon, announced = announced, sentence.endswith(":")
        listing = (after_colon or listing) and bool(_LIST_ITEM.match(sentence))
        if _DOT_LEADER.search(sentence):
            continue
        if len(sentence) < MIN_SENTENCE_CHARS and not (
            after_colon or listing or _COMMAND.match(sentence)
        ):
            # a fragment; but a short command is what a how-to announces ("start GDB:" then
            # "gdb prog"; "$ lsof -i"), and an item of an announced list ("- expat")
            continue
        m = _UNDERLINED.fullmatch(sentence)
        if (
            m is not None
            and len(m.group("rule")) >= max(3, len(m.group("heading")) // 2)
            and not _RULE.search(m.group("heading"))  # not "* ===== CORE CHANGES ====="
        ):
            out.append((m.group("heading").strip(), True))
            rest = m.group("rest")
            if rest and len(rest) >= MIN_SENTENCE_CHARS:
                out.append((rest, False))
            continue
        # a numbered section heading on its own line ("4.5. Details of Memcheck's checking
        # machinery"): what it introduces is the sentence after it
        out.append((sentence, is_numbered_heading(sentence)))
    return out


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w.]+", " ", text.lower()).split())


def is_title(sentence: str, hit: Hit) -> bool:
    """Whether ``sentence`` is the title of its passage's document ("libpng 1.6.39 - November
    20, 2022" atop the announcement): it names the document, and answers nothing."""
    return bool(hit.title) and _plain(sentence) == _plain(hit.title or "")


#: A line of at most this many words with no full stop is a heading or a title line.
LINE_WORDS = 8


def tells_version(sentence: str, version: str) -> bool:
    """Whether ``sentence`` is evidence about ``version``: it names it (:func:`names_version`)
    in a sentence, or as where a range of changes ends ("Changes from version 1.6.38 to
    version 1.6.39"); a heading or title that only names the release ("Release 3.19.0 (11 Apr
    2022)", "libpng 1.6.39 - November 20, 2022") says nothing about it."""
    if not names_version(sentence, version):
        return False
    line = sentence.split()
    if len(line) > LINE_WORDS or sentence.rstrip().endswith((".", "!", "?", ":", ";")):
        return True
    return bool(re.search(rf"\bto\s+(?:version\s+|v)?{re.escape(version)}\b", sentence, re.I))


def names_version(sentence: str, version: str) -> bool:
    """Whether ``sentence`` names ``version`` itself: as it is or as the same release ("3.19.0"
    for "3.19"; not a later one, "1.07.1" for "1.07"), and not as where a range of changes
    starts ("from 1.07 to 1.07.1" is about 1.07.1)."""
    v = re.escape(version)
    same = rf"(?<![\w.]){v}(?:\.0+)*(?!\.?\w)"  # not "1.07.1", nor "libpng-1.6.39.tar.gz"
    for m in re.finditer(same, sentence, re.IGNORECASE):
        if not re.search(r"\bfrom\s+(?:version\s+|v)?$", sentence[: m.start()], re.IGNORECASE):
            return True
    return False


#: A sentence of at most this many words without a full stop is a heading or a label.
HEADING_WORDS = 4


def is_heading(sentence: str) -> bool:
    """A heading or a label ("Installation", "Usage:", "* ==== CORE CHANGES ===="): a few words
    and no full stop, so the sentence after it is what it introduces."""
    text = sentence.strip().strip("*=#~ ")  # "* ===== CORE CHANGES =====", "## Usage"
    return (
        bool(_HEADING.fullmatch(text))
        and len(text.split()) <= HEADING_WORDS
        and not text.endswith((".", "!", "?"))
    )


#: What a heading looks like: a capital letter or a section number first, then words (not a
#: command line such as ``$ pip install x``, nor code).
_HEADING = re.compile(r"(?:\d+(?:\.\d+)*\.?\s+)?[A-Z][\w'’ ,&-]*:?")


def introduces(sentence: str) -> bool:
    """A heading, or a sentence ending in a colon: what it announces comes after it."""
    return is_heading(sentence) or sentence.rstrip().endswith(":")


def _introduced(candidates: Sequence[_Candidate], index: int) -> int | None:
    """The first sentence after ``index`` (same hit) that is not a heading: what it introduces.
    What a sentence ending in a colon announces is the piece right after it, unless that is an
    underlined heading: a configuration line ("add the following option ...:" then
    "VerifyHostKeyDNS yes") has a heading's shape, a few words without a full stop."""
    at = index
    announcing = candidates[index].sentence.rstrip().endswith(":") and not (
        candidates[index].label or is_heading(candidates[index].sentence)
    )
    for _ in range(MAX_NESTED_HEADINGS + 1):
        following = _followers(candidates, [at])
        if not following:
            return None
        at = following[0]
        if announcing and not candidates[at].label:
            # an item ending in a colon followed by an item of the same list ("* ISO 4217
            # (currencies):" then "* ISO 3166-2 (countries ...):", what each introduced left
            # out of the text: a badge, a picture) introduces nothing: the next is its sibling
            return None if _siblings(candidates[index].sentence, candidates[at].sentence) else at
        if not (
            candidates[at].label
            or is_heading(candidates[at].sentence)
            or is_synopsis(candidates[at].sentence)  # a man page's usage lines, under its name
        ):
            return at
    return None


#: Headings passed over to reach what a heading introduces ("Installation", "Quick Install").
MAX_NESTED_HEADINGS = 2

#: "What is jq?", "Who was Ada Lovelace?", "What are the tides", "What is Callgrind used
#: for?", "What does jq do?": the thing a definition names.
_DEFINITION_QUESTION = re.compile(
    r"^\s*(?:(?:what|who)\s+(?:is|are|was|were)\s+(?:(?:a|an|the)\s+)?(?P<subject>[^?]+?)"
    r"(?:\s+(?:(?:mainly|mostly)\s+)?(?:used\s+)?for)?"
    r"|what\s+(?:does|do)\s+(?:(?:a|an|the)\s+)?(?P<doer>[^?]+?)\s+do)\s*[?.]?\s*$",
    re.IGNORECASE,
)
#: A subject of at most this many words: longer, the question asks about more than a thing.
MAX_DEFINED_WORDS = 4


def defined_subject(question: str) -> str | None:
    """The thing a "What is X?" question asks to define, lower case, if it asks that alone."""
    m = _DEFINITION_QUESTION.match(question)
    if m is None:
        return None
    subject = (m.group("subject") or m.group("doer")).strip().lower()
    if subject in _PRONOUNS:  # "What is this used for?": nothing a sentence could start with
        return None
    return subject if 0 < len(subject.split()) <= MAX_DEFINED_WORDS else None


_PRONOUNS = frozenset({"it", "this", "that", "these", "those", "they", "he", "she", "them"})


def defines(sentence: str, subject: str) -> bool:
    """Whether ``sentence`` says what ``subject`` is: it starts with it (after an article), then
    a verb "to be" ("jq is a ...", "The Feed Pump FP-2 is ...", "Cscope, a ..., is") or a dash
    (a man page's name line: "jq - Command-line JSON processor")."""
    return _defining(sentence, subject) is not None


def defines_kind(sentence: str, subject: str) -> bool:
    """Whether ``sentence`` says what kind of thing ``subject`` is: :func:`defines`, the verb
    followed by an article or "one of" ("Nettle is a cryptographic library ...") or a man page's
    dash, not by what it is like ("Nettle is dual licenced under ...", "gzip is sensitive to
    compiler bugs"), which also starts with the subject and a verb "to be"."""
    m = _defining(sentence, subject)
    return m is not None and (m.group("dash") is not None or m.group("kind") is not None)


def _defining(sentence: str, subject: str) -> re.Match[str] | None:
    return re.match(
        rf"(?:(?:a|an|the)\s+)?{re.escape(subject)}(?:\s*\([^)]*\))?(?:,[^,]{{1,80}},)?"
        r"\s+(?:(?:is|are|was|were)\s+(?P<kind>(?:a|an|the|one\s+of)\s)?|(?P<dash>[-–—])\s)",
        sentence.strip().lower(),
    )


def _followers(candidates: Sequence[_Candidate], indices: Sequence[int]) -> list[int]:
    """The candidates that are the next sentence (same hit) of one of ``indices``, wherever
    the same sentences are (:attr:`_Candidate.also`)."""
    after = {(h, p + 1) for j in indices for h, p in candidates[j].places()}
    return [i for i, c in enumerate(candidates) if not after.isdisjoint(c.places())]


#: A list item: a bullet or a number before its text ("- Each value ...", "2. Run ...").
_LIST_ITEM = re.compile(r"\s*(?P<marker>[-*•‣◦]|\d{1,2}[.)])\s+\S")
#: Items of an announced list quoted after its first. Set a priori.
LIST_ITEMS = 7


def _unbulleted(sentence: str) -> str:
    """A quoted list item without its own bullet (the answer's line has one: "- Each value in
    Rust has an owner.", not "- - Each value ..."); a number stays ("2. Run ...")."""
    item = _LIST_ITEM.match(sentence)
    if item is None or item.group("marker")[0].isdigit():
        return sentence
    return sentence[item.end("marker") :].lstrip()


def _siblings(sentence: str, following: str) -> bool:
    """Both are items of one list: each starts with a list marker, the same one ("*" and "*",
    or both numbered), so that the second is no item of a list the first announces."""
    a, b = _LIST_ITEM.match(sentence), _LIST_ITEM.match(following)
    if a is None or b is None:
        return False
    marker_a, marker_b = a.group("marker"), b.group("marker")
    return marker_a == marker_b or (marker_a[0].isdigit() and marker_b[0].isdigit())


def _list_items(candidates: Sequence[_Candidate], index: int) -> list[int]:
    """The items of the list candidate ``index`` starts, after it (at most
    :data:`LIST_ITEMS`); none when it is no list item."""
    if not _LIST_ITEM.match(candidates[index].sentence):
        return []
    out: list[int] = []
    at = index
    while len(out) < LIST_ITEMS:
        following = [
            j
            for j in _followers(candidates, [at])
            if j != index and j not in out and _LIST_ITEM.match(candidates[j].sentence)
        ]
        if not following:
            break
        at = following[0]
        out.append(at)
    return out


class _Similarity:
    """Cosine similarity of the question to candidate sentences, embedded on demand (in one
    batch per :meth:`need`): most sentences of the evidence share no term with the question and
    can never be chosen, so they are never embedded."""

    def __init__(
        self, question: str, candidates: Sequence[_Candidate], embedder: TextEmbedder
    ) -> None:
        self.question = question
        self.candidates = candidates
        self.embedder = embedder
        self.values: dict[int, float] = {}
        self._query: np.ndarray | None = None

    def need(self, indices: Iterable[int]) -> None:
        missing = [i for i in dict.fromkeys(indices) if i not in self.values]
        if not missing:
            return
        texts = [self.candidates[i].sentence for i in missing]
        if self._query is None:
            vectors = np.asarray(self.embedder.embed([self.question, *texts]))
            self._query, vectors = vectors[0], vectors[1:]
        else:
            vectors = np.asarray(self.embedder.embed(texts))
        self.values.update(zip(missing, (vectors @ self._query).tolist(), strict=True))

    def __getitem__(self, i: int) -> float:
        if i not in self.values:
            self.need([i])
        return self.values[i]


def extractive_answer(
    question: str,
    evidence: Sequence[Hit],
    images: Sequence[Hit],
    embedder: TextEmbedder,
    *,
    entity_names: Sequence[str] = (),
    prefer: Callable[[Hit], bool] | None = None,
    max_sentences: int = 3,
    max_images: int = 2,
) -> tuple[str, list[Citation]]:
    """The offline answer: quoted evidence sentences with markers, images, and sources."""
    chosen = select_sentences(
        question,
        evidence,
        embedder,
        entity_names=entity_names,
        prefer=prefer,
        max_sentences=max_sentences,
    )
    citations = _Citations()
    lines: list[str] = []
    mark = citations.mark
    for sentence, hit in chosen:
        lines.append(f"- {_unbulleted(sentence)} [{mark(hit)}] {source_label(hit)}")
    for image in images[:max_images]:
        lines.append(f"- {image_markdown(image, mark(image))} {source_label(image)}")
    if not lines:
        return NO_EVIDENCE, []
    return EXTRACTIVE_HEADER + "\n" + "\n".join(lines), citations.cited


class _Citations:
    """The citations of an answer, numbered in the order their hits are first cited."""

    def __init__(self) -> None:
        self.cited: list[Citation] = []
        self._markers: dict[str, int] = {}

    def mark(self, hit: Hit) -> int:
        """The marker of ``hit``, numbered the next if it is not cited yet."""
        if hit.id not in self._markers:
            self._markers[hit.id] = len(self._markers) + 1
            self.cited.append(citation_for(self._markers[hit.id], hit))
        return self._markers[hit.id]


#: Sentences quoted per side of a comparison.
SIDE_SENTENCES = 2


def compared_answer(
    question: str,
    sides: Sequence[tuple[str, Sequence[Hit]]],
    embedder: TextEmbedder,
    *,
    max_sentences: int = SIDE_SENTENCES,
) -> tuple[str, list[Citation]]:
    """The offline answer of a comparison: under each side's name, the sentences of its
    passages that best answer ``question`` (:func:`select_sentences`), each cited; a sentence
    quoted for one side is not quoted again for the next, and one that holds no word but the
    side's name (its title as a heading) says nothing of it. A side with no passage says that
    nothing readable was found for it."""
    citations = _Citations()
    lines: list[str] = []
    quoted: set[str] = set()
    for side, passages in sides:
        chosen = [
            (sentence, hit)
            for sentence, hit in select_sentences(
                question, passages, embedder, max_sentences=max_sentences + 2
            )
            if sentence not in quoted and not set(terms(sentence)) <= set(terms(side))
        ][:max_sentences]
        if not chosen:
            lines.append(f"{side}: I found nothing you are allowed to read about it.")
            continue
        lines.append(f"{side}:")
        for sentence, hit in chosen:
            quoted.add(sentence)
            lines.append(f"- {_unbulleted(sentence)} [{citations.mark(hit)}] {source_label(hit)}")
    if not citations.cited:
        return NO_EVIDENCE, []
    return EXTRACTIVE_HEADER + "\n" + "\n".join(lines), citations.cited


#: A quoted line of the extractive answer: "- sentence [n] (Source: ...)".
_QUOTED = re.compile(r"^- (?P<sentence>.*?) \[\d+\] \(Source: .*\)$", re.MULTILINE)


def quoted_sentences(text: str) -> list[str]:
    """The evidence sentences an extractive answer (:func:`extractive_answer`) quotes."""
    return [m.group("sentence") for m in _QUOTED.finditer(text)]


# ------------------------------------------------------------------------------------- LLM

_SYSTEM = render_prompt("kgrag.agent", "answer_system")


def evidence_listing(evidence: Sequence[Hit], images: Sequence[Hit], max_chars: int) -> str:
    lines = []
    for i, hit in enumerate([*evidence, *images], start=1):
        kind = "image" if hit.kind == "image" else "text"
        body = (hit.text or hit.title or "")[:max_chars].replace("\n", " ")
        lines.append(f"[{i}] {source_label(hit)} ({kind}) {body}")
    return "\n".join(lines)


def llm_answer(
    client: LLM,
    question: str,
    evidence: Sequence[Hit],
    images: Sequence[Hit],
    *,
    feedback: str | None = None,
    history: str | None = None,
    max_chars: int = 1200,
) -> tuple[str, list[Citation], ChatResult]:
    """The model's answer with valid, renumbered citations, cited images and sources."""
    from kgrag.llm import ChatMessage

    numbered = [*evidence, *images]
    user = f"Question: {question}\n\nEvidence:\n{evidence_listing(evidence, images, max_chars)}"
    if history:
        user = f"Conversation so far:\n{history}\n\n{user}"
    if feedback:
        user += f"\n\nYour previous answer had a problem; fix it: {feedback}"
    result = client.chat(
        [ChatMessage(role="system", content=_SYSTEM), ChatMessage(role="user", content=user)]
    )
    text, citations = renumber(result.text, numbered)
    return text, citations, result


def answer_body(text: str) -> str:
    """An answer without its embedded image lines and its Sources list."""
    body = text.split(f"\n\n{SOURCES_HEADER}\n", 1)[0]
    return "\n".join(ln for ln in body.splitlines() if not ln.startswith("![")).strip()


def renumber(text: str, numbered: Sequence[Hit]) -> tuple[str, list[Citation]]:
    """Keep the markers that point at evidence (1-based into ``numbered``), renumber them in
    order of first appearance, drop the others; drop every image, link and URL of the text but
    links to the evidence's sources (:func:`guard_links`); embed cited images; append the
    sources."""
    mapping: dict[int, int] = {}
    citations: list[Citation] = []

    def replace(m: re.Match[str]) -> str:
        n = int(m.group(1))
        if not 1 <= n <= len(numbered):
            return ""
        if n not in mapping:
            mapping[n] = len(mapping) + 1
            citations.append(citation_for(mapping[n], numbered[n - 1]))
        return f"[{mapping[n]}]"

    allowed = {u for hit in numbered for u in (hit.uri, hit.image_uri) if u}
    body = guard_links(text.strip(), allowed)
    body = re.sub(r"\s*\(Source:[^)]*\)", "", body)
    body = re.sub(r"\[(\d+)\]", replace, body)
    body = re.sub(r"[ \t]+([.,;:])", r"\1", body)
    images = [c for c in citations if c.kind == "image"]
    parts = [body.strip()]
    if images:
        parts.append("\n".join(image_markdown(c, c.marker) for c in images))
    if citations:
        parts.append(sources_block(citations))
    return "\n\n".join(p for p in parts if p), citations
