"""What a table row tells the support test (kgrag.agent.support) beyond its own cells.

A row is stored as one chunk (kgrag.ingest.table_rows: ``caption — column: value; ...``), so it
does not carry the words its table is known by where its document's name or its file's name
says them: the tenth real folder's "What is the numeric ISO 4217 code of the yen?" quoted the row
"alpha_3: JPY; numeric: 392; name: Yen" of a sheet called "currencies", and the eleventh's "What
restrictions does NNAPI have for the Conv operator?" the row "Operator: ai.onnx:Conv; Note: Only
2D Conv is supported", whose table only ``nnapi_supported_ops.md`` names. Three things follow:

- *a row's table context counts as its heading* (:func:`table_names`, :func:`row_context`): the
  table's caption or sheet, its document's title and its file's name, identifiers read as words
  (``nnapi_supported_ops`` -> "nnapi supported ops"), count where a paragraph's title does: in
  the names the quoted passages hold and in the leads of ``subject_phrases``; so do its values
  read without their columns' names (:func:`row_values`: "22.04 LTS Jammy Jellyfish ..."), where
  a name phrase of the question joining adjacent cells is held whole (the fourteenth folder's
  "When was Ubuntu 22.04 LTS Jammy Jellyfish released?" abstained with the row first);
- *a row is about its table* (:func:`table_bridged`): a quoted row whose table an evidence
  sentence of another document holding one of the question's names names ("ISO 4217:
  http://www.currency-iso.org/..." in iso-codes' README, for the sheet "currencies"), as written
  or written otherwise (kgrag.agent.relation's word match), passes the quoted-names gate as the
  last hop of a multi-hop answer does;
- *a row says of its subject what its other cells say* (:func:`rows_relate`): a cell, its
  column's name and its value, names the thing the row is about ("name: Swiss Franc",
  "Operator: ai.onnx:Conv"), as its table's context does, and what the row says of it is in
  its other cells. An answer quoting only rows none of which holds words of the question in
  two of its cells (each one the other does not), nor every word of the question in one cell
  and its table's context ("What is the Swiss franc?"), nor, written otherwise, a word of
  it that it does not hold ("keeps" under a column "Kept by"), says nothing of what is asked:
  "What is the exchange rate between the Swiss franc and the euro?" quoted the rows "name:
  Swiss Franc" and "name: Euro" of a code table (the tenth folder's Q18). Reported as
  ``rows_relate``. The cost: a relation written in other words is not seen ("What
  restrictions does NNAPI have for the Conv operator?" over "Note: Only 2D Conv is
  supported" abstains, as "How fast is the Conv operator under NNAPI?" must: no word, as
  written or by the word match, tells the two apart; BENCHMARKS.md).

No constant of its own: the word match is kgrag.agent.relation's ``WORD_MATCH``, chosen on the
MuSiQue corpus's words. MuSiQue has no table rows, so none of this changes its answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgrag.agent.names import fold, question_names, raw_words, words
from kgrag.agent.relation import ANYTHING_ABOUT, DEFINITION, WORD_MATCH, written_otherwise
from kgrag.agent.word_vectors import word_vectors
from kgrag.core import Hit
from kgrag.ingest.table_rows import RowText, read_row
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.rule import identifiers
from kgrag.text import key_terms, stem, terms
from kgrag.text.file_names import file_words, spaced_name
from kgrag.text.sentences import sentence_texts
from kgrag.text.stopwords import HAVE_FORMS


def is_row(hit: Hit) -> bool:
    """Is ``hit`` a table row (kgrag.ingest.table_rows)?"""
    return hit.row is not None and hit.kind == "chunk"


def table_names(hit: Hit) -> list[str]:
    """What a row's table is known by: its caption or sheet (the context its text starts with,
    else its sheet), its document's title and its file's name, identifiers as words; empty for
    a passage that is no row."""
    if not is_row(hit):
        return []
    return _table_names(hit, read_row(hit.text or ""))


def _table_names(hit: Hit, row: RowText) -> list[str]:
    """:func:`table_names` of the row ``hit``, its text read as ``row``."""
    context = row.context or hit.sheet or ""
    title = hit.title or ""
    names = [context, title, spaced_name(title), file_words(hit.uri)]
    return list(dict.fromkeys(n for n in names if n.strip()))


def row_context(hit: Hit) -> str:
    """:func:`table_names` as one text ("" for a passage that is no row)."""
    return "\n".join(table_names(hit))


def row_values(hit: Hit) -> str:
    """A row's values in column order without their columns' names ("" for a passage that is no
    row): a record, read as the name it is known by. A question names a row by the values of
    adjacent columns run together ("Ubuntu 22.04 LTS Jammy Jellyfish" for "version: 22.04 LTS;
    codename: Jammy Jellyfish"), which its text holds apart, a column's name between them."""
    if not is_row(hit):
        return ""
    return " ".join(value for _, value in read_row(hit.text or "").cells if value)


def _said(text: str) -> set[str]:
    """The stemmed words of ``text``: its terms and every word (a two-letter code, "KY", is no
    term), identifiers as words too."""
    return set(terms(fold(text))) | set(words(text)) | set(words(spaced_name(text)))


#: "Which country has ...", "What restrictions does NNAPI have ...": a verb of possession asks
#: for nothing a row must write.
HAVING = frozenset(stem(w) for w in HAVE_FORMS)


def _asked(question: str) -> set[str]:
    """The stemmed words ``question`` asks with: its content terms and the codes it names
    ("the ISO 3166 code KY"), less the words that ask for anything said of the subject or for
    what it is, and :data:`HAVING`."""
    codes = {stem(w) for code in identifiers(question) for w in raw_words(code)}
    return (set(terms(fold(question))) | codes) - ANYTHING_ABOUT - DEFINITION - HAVING


def _cells(row: RowText) -> list[set[str]]:
    """The stemmed words of each cell of a row, its column's name and its value: one place
    ("Operator: ai.onnx:Conv" is the Conv operator, "name: Swiss Franc" the Swiss franc)."""
    return [_said(f"{column} {value}") for column, value in row.cells]


def _content_words(text: str) -> list[str]:
    """The content words of ``text`` (lower case, no numbers)."""
    return [w.lower() for w in raw_words(text) if key_terms(w.lower()) and not w.isdigit()]


def relates(question: str, hit: Hit, embedder: TextEmbedder | None) -> bool:
    """Does the row ``hit`` say something of what ``question`` asks (see the module doc)?"""
    wanted = _asked(question)
    row = read_row(hit.text or "")
    held = [wanted & cell for cell in _cells(row)]
    if not any(held):
        return False
    # two cells, each holding a word of the question the other does not: what the row says of
    # its subject (a cell repeating the subject's name, "Note: Only 2D Conv ...", says no more)
    for i, first in enumerate(held):
        for second in held[i + 1 :]:
            if first - second and second - first:
                return True
    # the question's words the row holds are in one cell (and in its table's context, which
    # names what the row is about, as a heading does): the others must be written otherwise
    # somewhere in it ("keeps" under the column "Kept by"), or the question asks what it is
    context = "\n".join(_table_names(hit, row)) if is_row(hit) else ""
    missing = wanted - set().union(*held) - _said(context)
    if not missing:
        return True
    if embedder is None:
        return False
    asked = [w.lower() for w in raw_words(question) if set(terms(fold(w))) & missing]
    elsewhere = [context, *(t for cell in row.cells for t in cell)]
    near = [w for text in elsewhere for w in _content_words(spaced_name(text))]
    return written_otherwise(asked, list(dict.fromkeys(near)), embedder)


def rows_relate(question: str, cited: Sequence[Hit], embedder: TextEmbedder | None) -> bool:
    """False when every ``cited`` passage is a table row and none of them :func:`relates` the
    question's words; true otherwise (a quoted paragraph is the other tests' to judge)."""
    if not cited or not all(is_row(h) for h in cited):
        return True
    return any(relates(question, h, embedder) for h in cited)


def table_bridged(
    question: str,
    cited: Sequence[Hit],
    evidence: Sequence[Hit],
    embedder: TextEmbedder | None,
) -> bool:
    """Is a ``cited`` row's table named (every content word of one of its
    :func:`table_names`, as written or written otherwise) in a sentence of an ``evidence``
    passage of another document, not a row, that holds one of the question's names?"""
    names = question_names(question)
    rows = [h for h in cited if is_row(h)]
    if not rows or not names:
        return False
    # prose of another document: a row of a copy of the table repeats its caption, and says
    # nothing of what the table is
    prose = [h for h in evidence if not is_row(h)]
    for row in rows:
        sentences = [
            sentence
            for hit in prose
            if hit.document_id is None or hit.document_id != row.document_id
            for sentence in [hit.title or "", *sentence_texts(hit.text or "", min_chars=1)]
            if names & set(terms(fold(sentence)))
        ]
        for table in table_names(row):
            called = list(dict.fromkeys(_content_words(spaced_name(table))))
            if called and any(_named(called, s, embedder) for s in sentences):
                return True
    return False


def _named(called: list[str], sentence: str, embedder: TextEmbedder | None) -> bool:
    """Does ``sentence`` hold every word of ``called``, as written (stemmed) or written
    otherwise?"""
    said = _content_words(spaced_name(sentence))
    stems = {stem(w) for w in said}
    rest = [w for w in called if stem(w) not in stems]
    if not rest:
        return True
    if embedder is None or not said:
        return False
    similarity = word_vectors(rest, embedder) @ word_vectors(said, embedder).T
    return bool((similarity.max(axis=1) >= WORD_MATCH).all())
