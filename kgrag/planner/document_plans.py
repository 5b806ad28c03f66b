"""Plans for the document query classes: LISTING, DOCUMENT_SUMMARY, METADATA_SEARCH, COMPARISON.

:func:`document_plan` turns an analysed question of one of these classes into a one-step plan of a
document tool (``list_documents``, ``document_summary``, ``metadata_search``, ``compare``,
``document_types``, ``document_dates``, ``document_authors``), which
answers from document metadata and stored summaries: no vector search, no full-text search over
chunks. It returns ``None`` for CONTENT_SEARCH and when the question gives the tool nothing to
work with, or when a listing or metadata question asks what something else does with the files
it names (kgrag/planner/listing_frame.py): then the content planner plans it as usual. Call it
before the rule planner.
"""

from __future__ import annotations

import re
from typing import get_args

from kgrag.planner.analysis import QueryAnalysis, QueryClass, named_document_types
from kgrag.planner.listing_frame import asks_about_the_world
from kgrag.planner.models import Plan
from kgrag.planner.params import DocumentFormat, DocumentModality
from kgrag.text.tokens import document_terms
from kgrag.text.words import word_set

__all__ = ["document_plan"]


_TAGGED = re.compile(
    r"\btagged\s+(?:as\s+|with\s+)?[\"']?([\w:.-]+)[\"']?|\bwith (?:the )?tag\s+[\"']?([\w:.-]+)"
)
_ABOUT = re.compile(
    r"\b(?:about|regarding|concerning|mentioning|on the topic of|on"
    r"|(?:photo(?:graph)?|picture|image|drawing|diagram|scan|recording)s?\s+(?:of|showing))"
    r"\s+(.+)$"
)
#: "the newest document", "what was added most recently": the metadata search's order (by date,
#: newest first) is the answer, its first few documents.
_RECENT = re.compile(
    r"\b(?:newest|latest|most recent(?:ly)?|last added|(?:recently|lately|just) added"
    r"|added (?:recently|lately|last)(?!\s+(?:week|month|year|days?|\d|few|two|three|four|five|six"
    r"|seven|ten|twelve)\b))\b",
    re.I,
)
RECENT_K = 5
#: What a listing or metadata question asks of the collection when it asks for its types ("what
#: types of files do you have?", "which formats are stored?", "a breakdown by type"): the
#: attribute asked for, a parameter like the order of :data:`_RECENT` (the class is the
#: classifier's).
_TYPES_ASKED = re.compile(
    r"\b(?:types?|kinds?|sorts?|formats?|modalit(?:y|ies))\s+of\s+(?:files?|documents?|data|media"
    r"|content|sources?|items?|records?|material)\b"
    r"|\b(?:file|document|media|data)\s+(?:types|kinds|formats)\b"
    r"|\b(?:which|what)\s+(?:types|kinds|sorts|formats|modalities)\b"
    r"|\b(?:by|per|of each|for each)\s+(?:file\s+|document\s+)?(?:type|kind|format|modality)\b",
    re.I,
)
#: "When was X added?", "what date was X ingested?", "when did X get uploaded?": the date of one
#: document is asked for; group 1 names the document.
_WHEN_ADDED = re.compile(
    r"^\s*(?:when|(?:on\s+)?what\s+(?:date|day|time))\s+(?:was|were|is|did|has|had)\s+(.+?)\s+"
    r"(?:(?:first|last|originally|initially)\s+)?(?:get\s+|got\s+|been\s+)?"
    r"(added|created|ingested|uploaded|stored|indexed|imported|saved|put in|dated|written"
    r"|modified|updated|changed|made)\b",
    re.I,
)
#: The verbs of :data:`_WHEN_ADDED` that only a store does: "When was the turbine overhaul log
#: added?" asks when a document was, whatever the intent classifier reads (content, as "When
#: was the Eiffel Tower built?"), when nothing follows the verb ("When was salt added to the
#: soup?" is about salt).
_STORE_VERBS = word_set("added ingested uploaded indexed imported")
_TO_THE_STORE = re.compile(
    r"\s*(?:(?:to|in|into)\s+(?:the\s+)?(?:store|collection|library|folder|index|archive)\s*)?"
    r"[?.!]*\s*$",
    re.I,
)
#: "Who wrote X?", "who is the author of X?", "by whom was X written?": the authors of one
#: document are asked for; group ``target`` names it. The class is the classifier's (metadata or
#: listing); this only reads the parameter.
_WHO_WROTE = re.compile(
    r"^\s*(?:(?:who|whom)\s+(?:wrote|authored|created|drafted|prepared|composed|penned"
    r"|(?:has|have|had)\s+(?:written|authored))\s+(?P<target>.+?)"
    r"|who(?:'s|\s+(?:is|are|was|were))\s+(?:the\s+)?(?:authors?|writers?|creators?)\s+of\s+"
    r"(?P<target2>.+?)"
    r"|(?:by\s+whom|who)\s+(?:was|were|is|are)\s+(?P<target3>.+?)\s+(?:written|authored"
    r"|created|drafted|prepared|composed)(?:\s+by)?"
    r"|(?:what|which)\s+(?:is|are)\s+(?:the\s+)?(?:authors?|writers?)(?:'s)?\s+(?:name\s+|names\s+)?"
    r"of\s+(?P<target4>.+?))\s*[?.!]*\s*$",
    re.I,
)
#: The author a listing asks for: "documents written by Maria", "files by Ken Thompson", "which
#: documents did Maria write?", "what has Ken Thompson authored here?", "list what Jane
#: authored". Group ``name`` is the author.
_BY_AUTHOR = re.compile(
    r"(?:\b(?:written|authored|created|drafted|prepared|composed|penned|signed|sent)\s+by\s+"
    r"(?P<name>.+?)"
    r"|\b(?:documents?|files?|papers?|reports?|notes?|pages?|pdfs?|texts?|articles?|messages?"
    r"|e-?mails?|mails?|books?|slides?|presentations?|spreadsheets?|everything|anything"
    r"|things|works?|writings?)\s+by\s+(?:the\s+)?(?:authors?\s+)?(?P<name2>.+?)"
    r"|\b(?:did|has|have|had)\s+(?P<name3>.+?)\s+(?:write|written|author|authored|create"
    r"|created|draft|drafted|compose|composed)"
    r"|\b(?:what|which(?:\s+\w+)?|everything|anything)\s+(?:(?:has|have|had|did)\s+)?(?P<name4>[^?.!]+?)\s+(?:wrote|authored"
    r"|has\s+written|has\s+authored|have\s+written|drafted|composed)"
    r")(?:\s+(?:here|so\s+far|in\s+(?:the\s+)?(?:store|collection|library|folder|corpus|archive)"
    r"|stored|kept|we\s+have|you\s+have|is\s+there|are\s+there))*\s*[?.!]*\s*$",
    re.I,
)
#: What follows "by" in a listing and names no author ("documents by type", "files by date").
_NOT_AUTHORS = word_set(
    """type types kind kinds format formats date dates size sizes topic topics modality year
    month name title folder tag tags newest oldest default"""
)
_TYPE_NOUNS = word_set(
    """image picture photo photograph drawing diagram recording audio podcast voicemail call pdf
    text note markdown txt tagged tag man manual manpage page csv tsv spreadsheet workbook html web
    webpage md"""
)
#: A data format's name and the nouns it was named with ("the YAML config files"): no topic of a
#: question that names a data format (:data:`kgrag.planner.analysis.DocumentType`).
_DATA_FORMAT_WORDS = word_set(
    """json yaml yml xml toml data config configuration setting manifest record"""
)
_DATA_FORMATS = frozenset({"json", "yaml", "xml", "toml"})
_LISTING_NOISE = word_set(
    """have has got stored there kept available held ingested indexed related relating
    mention mentioning concern concerning regarding topic know report paper article memo"""
)
#: Words that ask for a count ("how many documents ...?"): no topic of a listing.
_COUNTING = word_set("how many much number count total")
#: Words of a metadata question that ask about the documents, not what they are about: counts,
#: order, dates and lengths ("how many PDFs", "the newest recordings", "added in March", "longer
#: than a minute"), the collection itself. A type noun's other words are its topic.
_METADATA_NOISE = _COUNTING | word_set(
    """all any every each some collection library corpus
    folder archive store newest latest oldest earliest recent recently most least last first
    new old added uploaded created modified dated date since before after until ago today
    yesterday day days week weeks month months year years january february march april june
    july august september october november december jan feb mar apr jun jul aug sep sept oct
    nov dec long longer longest short shorter shortest than minute minutes second seconds hour
    hours size large larger largest big bigger biggest small smaller smallest"""
)


def document_plan(question: str, analysis: QueryAnalysis) -> Plan | None:
    """A plan of one document tool for a LISTING, DOCUMENT_SUMMARY, METADATA_SEARCH or
    COMPARISON question; ``None`` when the question is another class or names nothing to match."""
    step = _step(question, analysis)
    if step is None:
        return None
    cue = "; ".join(c for c in analysis.cues if c.startswith("class ")) or analysis.query_class
    step["trace"] = {"source": "rule-based", "explanation": f"{step['trace']} ({cue})"}
    return Plan.parse({"plan": [{"step_id": 1, **step}], "traceability": True})


def _step(question: str, analysis: QueryAnalysis) -> dict[str, object] | None:
    entity_ids = [e.id for e in analysis.entity_mentions]
    if analysis.query_class in (
        QueryClass.LISTING,
        QueryClass.METADATA_SEARCH,
    ) and asks_about_the_world(question):
        return None  # "Which files does the daemon read at startup?": what a document says
    if analysis.query_class in (QueryClass.LISTING, QueryClass.METADATA_SEARCH):
        asked = _asked_of_documents(question)
        if asked is not None:
            return asked
    elif _asks_when_stored(question):
        return _asked_of_documents(question)
    if analysis.query_class is QueryClass.LISTING:
        if named_document_types(question) or _TAGGED.search(question) or asked_author(question):
            # "which images ...", "... tagged X"; "which Git release notes ...": about Git
            return _metadata_step(question, analysis, topic_words=True)
        terms = [
            t for t in document_terms(question) if t not in _LISTING_NOISE and t not in _COUNTING
        ]
        if not terms and not entity_ids:
            return {  # "list what is stored": every readable document
                "type": "metadata_search",
                "parameters": {"modalities": list(get_args(DocumentModality))},
                "trace": "list every readable document (no topic named)",
            }
        return {
            "type": "list_documents",
            "parameters": {
                "about": terms or [e.name.lower() for e in analysis.entity_mentions],
                "entity_ids": entity_ids,
            },
            "trace": "list the readable documents whose title, tags, summary or entities match",
        }
    if analysis.query_class is QueryClass.DOCUMENT_SUMMARY:
        if not analysis.target:
            return None
        return {
            "type": "document_summary",
            "parameters": {"target": analysis.target},
            "trace": f"the stored summary of the document {analysis.target!r}",
        }
    if analysis.query_class is QueryClass.METADATA_SEARCH:
        # "which Riverside pdfs", "which pdfs mention Riverside": the type and its topic
        types = analysis.document_types or named_document_types(question)
        return _metadata_step(question, analysis, topic_words=bool(types))
    if analysis.query_class is QueryClass.COMPARISON:
        if len(analysis.compared) < 2:
            return None
        return {
            "type": "compare",
            "parameters": {
                "sides": list(analysis.compared[:4]),
                "entity_ids": entity_ids,
                "query": question,
            },
            "trace": "each side's passages nearest the question, side by side",
        }
    return None


def _asks_when_stored(question: str) -> bool:
    """Whether ``question`` asks when something was added to the store ("When was the turbine
    overhaul log added?", "when did X get uploaded?"): a verb of :data:`_STORE_VERBS` ends
    it."""
    when = _WHEN_ADDED.search(question)
    return (
        when is not None
        and when.group(2).lower() in _STORE_VERBS
        and _TO_THE_STORE.match(question, when.end()) is not None
    )


def asked_author(question: str) -> str | None:
    """The author a listing asks for ("which documents did Maria write?": ``Maria``), if any."""
    found = _BY_AUTHOR.search(question)
    if found is None:
        return None
    name = next(g for g in found.groups() if g is not None).strip(" \"'")
    name = re.sub(r"^(?:the|a|an)\s+", "", name, flags=re.I)
    words = [w for w in re.findall(r"[\w'-]+", name.lower()) if w not in ("the", "a", "an")]
    if (
        not words
        or all(w in _NOT_AUTHORS for w in words)
        or len(words) > 6
        or any(c.isdigit() for c in name)  # a period: "files by 2023", no name
    ):
        return None
    return name


def _who_wrote(question: str) -> dict[str, object] | None:
    """A ``document_authors`` step for a question asking who wrote a named document."""
    found = _WHO_WROTE.search(question)
    if found is None:
        return None
    named = next(g for g in found.groups() if g is not None)
    target = re.sub(r"^(?:the|a|an|your|my|our)\s+", "", named.strip(" \"'"), flags=re.I)
    if not document_terms(target):
        return None
    return {
        "type": "document_authors",
        "parameters": {"target": target},
        "trace": f"the stored authors of the document {target!r}",
    }


def _asked_of_documents(question: str) -> dict[str, object] | None:
    """A ``document_types`` step for a question asking which types the collection holds, a
    ``document_dates`` step for one asking when a named document was added or made, a
    ``document_authors`` step for one asking who wrote a named document."""
    who = _who_wrote(question)
    if who is not None:
        return who
    if _TYPES_ASKED.search(question):
        return {
            "type": "document_types",
            "parameters": {},
            "trace": "count the readable documents of each type",
        }
    when = _WHEN_ADDED.search(question)
    if when:
        target = re.sub(
            r"^(?:the|a|an|your|my|our)\s+", "", when.group(1).strip(" \"'"), flags=re.I
        )
        if document_terms(target):
            return {
                "type": "document_dates",
                "parameters": {"target": target},
                "trace": f"the stored dates of the document {target!r}",
            }
    return None


def _metadata_step(
    question: str, analysis: QueryAnalysis, *, topic_words: bool = False
) -> dict[str, object] | None:
    """A ``metadata_search`` step: the types, years and tags the question names, and its topic
    (the words after "about", "regarding", "photos of"...; with ``topic_words``, a question naming
    a type, also the content words beside its type noun: "which Git release notes": ``git``,
    ``release``; not its tags, nor words about counts, dates or order: :data:`_METADATA_NOISE`)."""
    params: dict[str, object] = {}
    types = analysis.document_types or named_document_types(question)
    modalities = [t for t in types if t in get_args(DocumentModality)]
    formats = [t for t in types if t in get_args(DocumentFormat)]
    if modalities:
        params["modalities"] = modalities
    if formats:
        params["formats"] = formats
    if analysis.period is not None:
        if analysis.period.date_from is not None:
            params["date_from"] = analysis.period.date_from
        if analysis.period.date_to is not None:
            params["date_to"] = analysis.period.date_to
    tags = [(a or b).lower() for a, b in _TAGGED.findall(question)]
    if tags:
        params["tags"] = tags
    author = asked_author(question)
    if author is not None:
        params["authors"] = [author]
        # the author's words are no topic ("files by Ken Thompson")
        question = question.replace(author, " ")
    match = _ABOUT.search(question)
    if match or topic_words:
        type_words = _TYPE_NOUNS | (_DATA_FORMAT_WORDS if _DATA_FORMATS & set(formats) else set())
        about = [
            t
            for t in document_terms(match.group(1) if match else question)
            if not t.isdigit()
            and t not in type_words
            and t.removesuffix("s") not in type_words
            and t not in _LISTING_NOISE
            and t not in _METADATA_NOISE
            and t not in tags
        ]
        if about:
            params["about"] = about
    if _RECENT.search(question):
        params.setdefault("modalities", list(get_args(DocumentModality)))
        params["k"] = RECENT_K
    if not params:
        return None
    shown = ", ".join(f"{k}={v}" for k, v in params.items())
    return {
        "type": "metadata_search",
        "parameters": params,
        "trace": f"readable documents by metadata ({shown})",
    }
