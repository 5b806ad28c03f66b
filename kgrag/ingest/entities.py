"""Offline entity extraction, name normalisation and de-duplication.

No model is needed: :class:`RuleEntityExtractor` finds names with rules and the batch's own word
statistics, :class:`EntityResolver` merges the mentions into entities across a document and across
the corpus, and the result is a frozen :class:`ExtractionResult` that the graph writer turns into
``Entity`` nodes, ``(Chunk)-[:MENTIONS {count}]->(Entity)`` and
``(Entity)-[:RELATED {weight}]-(Entity)``. An LLM extractor can fill the same models from JSON
(``ExtractionResult.model_validate_json``); entity types are accepted case-insensitively and common
synonyms (``LOCATION``, ``GPE``, ``ORGANIZATION`` ...) are mapped onto :data:`ENTITY_TYPES`.

Candidates (what counts as a name)
    * maximal runs of capitalised tokens, with inner connectors (``of``, ``de``, ``van``, ``the``,
      ``&`` ...; at most two in a row and only when a capitalised token follows), initials and
      honorific abbreviations (``John F. Kennedy``, ``Dr. Ada Lovelace``, ``St. Louis``) and a
      short trailing number (``Boeing 747``); a possessive ``'s`` ends a run;
    * acronyms (``NASA``, ``U.S.``), camel-case names (``iPhone``) and part numbers mixing letters
      and digits (``X-200``, ``PX-7``);
    * title-case text in double quotes (``"Gone with the Wind"``);
    * dates with a month name (``1 March 2010``, ``March 1, 2010``, ``March 2010``).
    Sentence-initial words are names only when they are not stop words and the corpus seen so far
    does not use them mostly in lower case (``However``, ``The``, ``In 1990``, ``Born in ...`` give
    nothing). Lower-case terms are never candidates: precision first.

Types are cheap hints (honorifics, first names, corporate and place cue words, ``in X``, digits,
month names), voted over all mentions; they never take part in identity.

Identity is :func:`normalise_name`. De-duplication beyond it (:class:`EntityResolver`):
    * acronym definitions ``World Health Organization (WHO)`` / ``WHO (World Health
      Organization)`` make the acronym an alias of the long form: for the whole corpus when the
      defining document is public, otherwise only in documents whose every reader may read it;
    * inside one document, a bare surname (``Lovelace``, ``Mr. Lovelace``) resolves to the one
      person-shaped full name of the document that ends with it; if two such people share it the
      mention resolves to nothing (it is dropped); with none it stays an entity of its own;
    * inside one document, a bare part code (``FP-2``) resolves to the one name of the document
      that ends with it (``Feed Pump FP-2``); with two such names it stays an entity of its own;
    * nothing else is merged: ``Paris`` and ``Paris Hilton`` stay distinct, and surnames and
      part codes never match across documents.

RELATED weight is the number of chunks (of the batch) in which both entities are mentioned: an
integer-valued, deterministic, additive count that matches what the writer recomputes from the
graph; pairs are stored once with ``source_id < target_id``.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from itertools import combinations, pairwise
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kgrag.core import PUBLIC

log = logging.getLogger(__name__)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


EntityType = Literal["PERSON", "ORG", "PLACE", "PRODUCT", "DATE", "OTHER"]
ENTITY_TYPES: tuple[EntityType, ...] = ("PERSON", "ORG", "PLACE", "PRODUCT", "DATE", "OTHER")

_TYPE_SYNONYMS: dict[str, EntityType] = {
    "PER": "PERSON",
    "PEOPLE": "PERSON",
    "HUMAN": "PERSON",
    "ORGANIZATION": "ORG",
    "ORGANISATION": "ORG",
    "COMPANY": "ORG",
    "INSTITUTION": "ORG",
    "LOCATION": "PLACE",
    "LOC": "PLACE",
    "GPE": "PLACE",
    "FAC": "PLACE",
    "FACILITY": "PLACE",
    "CITY": "PLACE",
    "COUNTRY": "PLACE",
    "TIME": "DATE",
    "WORK_OF_ART": "OTHER",
    "EVENT": "OTHER",
    "NORP": "OTHER",
    "MISC": "OTHER",
}


def _coerce_type(value: Any) -> Any:
    if isinstance(value, str):
        upper = value.strip().upper().replace(" ", "_")
        if upper in ENTITY_TYPES:
            return upper
        return _TYPE_SYNONYMS.get(upper, "OTHER")
    return value


# ---------------------------------------------------------------------------------------------
# Models passed between stages (frozen; an LLM's JSON validates straight into them)
# ---------------------------------------------------------------------------------------------


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EntityRecord(_Frozen):
    """One entity: ``id`` is the normalised name, ``name`` the display form."""

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    type: EntityType = "OTHER"
    aliases: tuple[str, ...] = ()

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: Any) -> Any:
        return _coerce_type(value)


class Mention(_Frozen):
    """``(Chunk {id: chunk_id})-[:MENTIONS {count}]->(Entity {id: entity_id})``."""

    chunk_id: str = Field(min_length=1)
    entity_id: str = Field(min_length=1)
    count: int = Field(default=1, ge=1)


class Relation(_Frozen):
    """An undirected co-occurrence, stored once with ``source_id < target_id``."""

    source_id: str = Field(min_length=1)
    target_id: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)

    @model_validator(mode="after")
    def _ordered(self) -> Relation:
        if not self.source_id < self.target_id:
            raise ValueError(
                f"relation ({self.source_id!r}, {self.target_id!r}) must have source_id < "
                "target_id (an undirected pair is stored once, smaller id first)"
            )
        return self


class ExtractionResult(_Frozen):
    """What one batch of chunks contributes to the graph. Checked for internal consistency."""

    entities: tuple[EntityRecord, ...] = ()
    mentions: tuple[Mention, ...] = ()
    relations: tuple[Relation, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> ExtractionResult:
        ids = [e.id for e in self.entities]
        known = set(ids)
        if len(known) != len(ids):
            dup = sorted(i for i, n in Counter(ids).items() if n > 1)
            raise ValueError(f"duplicate entity ids: {dup[:5]}")
        seen_m: set[tuple[str, str]] = set()
        for m in self.mentions:
            if m.entity_id not in known:
                raise ValueError(f"mention of unknown entity {m.entity_id!r}")
            if (m.chunk_id, m.entity_id) in seen_m:
                raise ValueError(f"duplicate mention ({m.chunk_id!r}, {m.entity_id!r})")
            seen_m.add((m.chunk_id, m.entity_id))
        seen_r: set[tuple[str, str]] = set()
        for r in self.relations:
            if r.source_id not in known or r.target_id not in known:
                raise ValueError(f"relation on unknown entity ({r.source_id!r}, {r.target_id!r})")
            if (r.source_id, r.target_id) in seen_r:
                raise ValueError(f"duplicate relation ({r.source_id!r}, {r.target_id!r})")
            seen_r.add((r.source_id, r.target_id))
        return self


@runtime_checkable
class EntityExtractor(Protocol):
    """Turns ``(chunk_id, text)`` pairs into entities, mentions and co-occurrence relations.

    ``document_ids`` (parallel to ``chunks``) scopes context-dependent resolution (bare surnames);
    without it the whole batch is one document. ``document_acls`` (document id -> its stored ACL)
    scopes acronym definitions (:meth:`EntityResolver.resolve_document`); a document it does not
    name is public.
    """

    def extract(
        self,
        chunks: Sequence[tuple[str, str]],
        *,
        document_ids: Sequence[str] | None = None,
        document_acls: Mapping[str, Sequence[str]] | None = None,
    ) -> ExtractionResult: ...

    def observe(self, texts: Iterable[str]) -> None:
        """Learn corpus statistics from the texts of a whole job before any :meth:`extract`.

        After it, :meth:`extract` no longer learns from its own chunks, so what one chunk yields
        does not depend on which documents came before it (an interrupted and resumed job then
        extracts exactly what an uninterrupted one does). Extractors without statistics do
        nothing.
        """
        ...


# ---------------------------------------------------------------------------------------------
# Word lists (kept small; lower case)
# ---------------------------------------------------------------------------------------------

# Function words never start a name, wherever they stand.
_FUNCTION = _words("""
    a an and or but nor if as at by in on of to for from with into onto upon via per than
    about above across after against along among around before behind below beneath beside
    between beyond during except inside outside over through throughout toward towards under
    until within without this that these those however although though while whereas when
    whenever where wherever whether which who whom whose what whatever why how he she it
    him they them we us you i me is was were
    are be been being am has had have having do does did also thus hence therefore meanwhile
    moreover furthermore nevertheless despite since because unless unlike including according
""")
# Words that are not names on their own nor at a sentence start (plus the function words).
_STOP = _FUNCTION | _words("""
    a about above according across after afterwards again against ago all almost along already
    also although always am among an and another any anyone anything are around as at away back
    be because been before being below beneath beside besides between beyond both but by can
    cannot could despite did do does doing done down during each early either else elsewhere
    enough even ever every everyone everything except few following for formerly from further
    furthermore had has have having he hence her here hers herself him himself his how however
    i if in including indeed inside instead into is it its itself just last later lately least
    less like many may meanwhile might more moreover most mostly much must my myself near nearly
    neither never nevertheless next no nobody none nor not nothing now of off often on once one
    only onto or other others otherwise our ours ourselves out outside over overall own per
    perhaps prior rather recently regardless same several she should since so some someone
    something sometimes soon still such than that the their theirs them themselves then there
    thereafter therefore these they this those though through throughout thus to today together
    too toward towards under unless unlike until up upon us very via was we well were what
    whatever when whenever where whereas wherever whether which while who whoever whom whose why
    will with within without would yet you your yours yourself yourselves
    bc ad bce ce
    born based built called created designed developed established founded known located made
    named released set situated written directed produced published started
    first second third new former current latter previous originally additionally currently
    eventually previously subsequently initially recently finally later unfortunately
    yes oh ok thanks please let see note
    """)

_CONNECTORS = _words(
    "of de del della der den van von da di du des la le the for y al el bin ibn am upon & dos das"
)
_NAME_PARTICLES = _words("de del della der den van von da di du des la le y al el bin ibn")

_HONORIFICS = _words("mr mrs ms mx dr prof professor rev reverend")
_TITLE_WORDS = _HONORIFICS | _words(
    "sir dame lord lady king queen prince princess president senator gov governor gen general col "
    "colonel capt captain lt sgt judge justice pope saint st secretary minister chairman "
    "director emperor empress chancellor mayor bishop archbishop duke duchess earl count"
)
_NON_TERMINAL_ABBREV = _HONORIFICS | _words("st mt ft gen col lt sgt capt hon sen gov no vs")
_CORP_SUFFIXES = _words(
    "inc incorporated ltd limited llc llp plc corp corporation co gmbh ag sa nv bv pty lp srl spa "
    "oyj"
)
_PERIOD_ABBREV = _words("inc corp ltd co jr sr bros")
_ERAS = _words("ad bc bce ce")
_NOT_BEFORE_NUMBER = _words("ad bc bce ce no nos vol page pages p pp fig figure table chapter")
_NAME_SUFFIXES = _words("jr sr ii iii iv v")

_MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_WEEKDAYS = _words("monday tuesday wednesday thursday friday saturday sunday")

_ORG_CUES = _words("""
    university college institute institution company corporation corp inc ltd llc gmbh plc
    association society press records party council committee agency bank group club fc
    ministry department organization organisation foundation school academy army navy
    federation league union commission authority board studios studio entertainment airlines
    airways motors systems technologies labs laboratories network broadcasting television
    channel radio church orchestra band team trust fund parliament congress court police
    publishers publishing pictures films media games software holdings industries
    """)
_PLACE_CUES = _words("""
    city county river lake mountain mountains mount mt island islands street avenue road bay
    sea ocean valley province state kingdom republic airport bridge station square desert
    forest peninsula hills district region village town park canal gulf coast harbour harbor
    strait falls beach borough parish township prefecture municipality
    """)
_KNOWN_PLACES = _words("""
    africa asia europe antarctica australia america oceania
    america china india japan france germany italy spain russia canada mexico brazil england
    scotland wales ireland britain egypt israel iran iraq turkey greece poland sweden norway
    denmark finland netherlands belgium switzerland austria portugal argentina chile peru
    london paris berlin rome madrid moscow tokyo beijing delhi washington chicago boston
    """)
_PLACE_ACRONYMS = _words("us usa uk uae ussr eu")
_FIRST_NAMES = _words("""
    ada adam alan albert alexander alice andrew anna anne arthur barbara ben benjamin bill bob
    carl carlos catherine charles charlotte chris christopher daniel david edward elizabeth
    emily emma eric frank franz frederick george grace harry helen henry isaac jack jacob james
    jane jean jennifer john johann jonathan joseph juan karl kate katherine laura louis lucy
    margaret maria marie mark martin mary matthew michael nicholas paul peter philip richard
    robert will samuel sarah sophie stephen steven susan thomas tom victoria walter william wolfgang
    """)
_TITLE_SMALL = _words(
    "a an the and but or nor for so yet at by in of on to up as with from into over upon than via"
)
_PREP_PLACE = _words("in near across throughout outside inside")

_ROMAN_RE = re.compile(r"^[IVXLCDM]+$")
_UNIT_RE = re.compile(
    r"^\d+(?:st|nd|rd|th|s|km|kg|mg|m|cm|mm|mi|ft|lb|lbs|am|pm|mph|g|kb|mb|gb|tb|hz|khz|mhz|ghz"
    r"|kw|mw|w|v|bc|ad|yo)$",
    re.IGNORECASE,
)
_ADVERB_RE = re.compile(
    r"\w{3}(?:ally|ively|ously|ently|antly|edly|ingly|fully|lessly|ably|ibly|arly)$"
)
_LOWER_CODE_RE = re.compile(r"^[a-z]{1,4}-?\d+[a-z]?$")


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------

_PUNCT_MAP = {ord(c): "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"}
_PUNCT_MAP.update({ord(c): "'" for c in "\u2018\u2019\u201a\u201b\u2032`\u00b4"})
_PUNCT_MAP.update({ord(c): '"' for c in "\u201c\u201d\u201e\u201f\u2033"})

_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ISO_DATE_RE = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_DMY_RE = re.compile(
    rf"^(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_ALT})\.?,?\s+(\d{{4}})$", re.IGNORECASE
)
_MDY_RE = re.compile(
    rf"^({_MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})$", re.IGNORECASE
)
_MY_RE = re.compile(rf"^({_MONTH_ALT})\.?,?\s+(\d{{4}})$", re.IGNORECASE)

_DOTTED_RE = re.compile(r"\b(?:[^\W\d_]\.){2,}")
_LETTER_DIGIT_HYPHEN_RE = re.compile(r"(?<=[^\W\d_])-(?=\d)|(?<=\d)-(?=[^\W\d_])")
_POSSESSIVE_RE = re.compile(r"(?<=\w)'s$|(?<=s)'$")
_NOT_NAME_CHARS_RE = re.compile(r"[^\w\s'&+#/-]|_")
_EDGE_STRIP = " \t\r\n\"'()[]{}<>.,;:!?*-"


def _iso_date(s: str) -> str | None:
    """Canonical ``YYYY-MM-DD`` / ``YYYY-MM`` for a whole-string date, else None."""
    text = s.strip()
    m = _ISO_DATE_RE.match(text)
    if m:
        y, mo, d = int(m.group(1)), int(m.group(2)), m.group(3)
        return _valid_date(y, mo, int(d) if d else None)
    m = _DMY_RE.match(text)
    if m:
        return _valid_date(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))
    m = _MDY_RE.match(text)
    if m:
        return _valid_date(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)))
    m = _MY_RE.match(text)
    if m:
        return _valid_date(int(m.group(2)), _MONTHS[m.group(1).lower()], None)
    return None


def _valid_date(year: int, month: int, day: int | None) -> str | None:
    try:
        date(year, month, day or 1)
    except ValueError:
        return None
    return f"{year:04d}-{month:02d}" + (f"-{day:02d}" if day else "")


def _strip_marks(s: str) -> str:
    decomposed = unicodedata.normalize("NFKD", s)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


def _normalise_once(name: str) -> str:
    s = unicodedata.normalize("NFKC", name).translate(_PUNCT_MAP)
    iso = _iso_date(s)
    if iso:
        return iso
    s = s.strip(_EDGE_STRIP.replace("-", "")).strip(_EDGE_STRIP)
    s = _POSSESSIVE_RE.sub("", s)
    s = _strip_marks(s.casefold())
    s = s.replace(" & ", " and ")
    s = _DOTTED_RE.sub(lambda m: m.group(0).replace(".", ""), s)
    s = _LETTER_DIGIT_HYPHEN_RE.sub("", s)
    s = _NOT_NAME_CHARS_RE.sub(" ", s).replace("-", " ")
    tokens = [t.strip("'") for t in s.split()]
    tokens = [t for t in tokens if t]
    tokens = _merge_single_letters(tokens)
    changed = True
    while changed and tokens:
        changed = False
        if len(tokens) > 1 and tokens[0] == "the":
            tokens, changed = tokens[1:], True
        if len(tokens) > 2 and tokens[0] in _HONORIFICS:
            tokens, changed = tokens[1:], True
        if len(tokens) > 1 and tokens[-1] in _CORP_SUFFIXES:
            tokens, changed = tokens[:-1], True
    return " ".join(_merge_codes(tokens))


def _merge_single_letters(tokens: list[str]) -> list[str]:
    """``u s`` -> ``us``, ``j r r tolkien`` -> ``jrr tolkien`` (dotted initials and acronyms)."""
    out: list[str] = []
    run: list[str] = []
    for t in [*tokens, ""]:
        if len(t) == 1 and t.isalpha():
            run.append(t)
            continue
        if len(run) >= 2:
            out.append("".join(run))
        else:
            out.extend(run)
        run = []
        if t:
            out.append(t)
    return out


def _merge_codes(tokens: list[str]) -> list[str]:
    """``x 200`` -> ``x200``: a short letter token (not a connector) glued to the number after."""
    out: list[str] = []
    for t in tokens:
        if (
            out
            and t.isdigit()
            and out[-1].isalpha()
            and len(out[-1]) <= 3
            and out[-1] not in _CONNECTORS
            and out[-1] not in _TITLE_SMALL
        ):
            out[-1] += t
        else:
            out.append(t)
    return out


@functools.lru_cache(maxsize=1 << 16)
def normalise_name(name: str) -> str:
    """The entity id for a surface form; ``""`` when nothing name-like is left.

    In order: Unicode NFKC; typographic dashes and quotes to ASCII; a whole-string date becomes
    ISO (``1 March 2010`` / ``March 1, 2010`` -> ``2010-03-01``, ``March 2010`` -> ``2010-03``);
    surrounding quotes, brackets and punctuation stripped; a final possessive (``'s``, ``s'``)
    dropped; casefold; accents stripped (NFKD minus combining marks); `` & `` -> `` and ``;
    dotted acronyms and spaced initials joined (``U.S.`` -> ``us``, ``J. R. R.`` -> ``jrr``);
    a hyphen between letters and digits removed (``X-200`` -> ``x200``), other punctuation
    and hyphens become spaces; then, repeatedly, a leading ``the``, a leading honorific (``Dr``,
    ``Mr``, ``Prof`` ... when at least two words remain) and trailing corporate suffixes
    (``Inc``, ``Ltd``, ``Corp``, ``Corporation``, ``Co``, ``GmbH``, ``LLC``, ``plc``, ``AG`` ...)
    are stripped; finally a short letter group and the number after it are joined
    (``x 200`` -> ``x200``) and whitespace is collapsed. The function is idempotent.
    """
    current = _normalise_once(name)
    for _ in range(4):
        again = _normalise_once(current)
        if again == current:
            break
        current = again
    return current


def _clean_surface(surface: str) -> str:
    s = unicodedata.normalize("NFKC", surface)
    s = " ".join(s.split()).strip(_EDGE_STRIP.replace(".", "").replace("-", ""))
    s = re.sub(r"(?<=\w)['\u2019]s$|(?<=s)['\u2019]$", "", s)
    return s.strip()


# ---------------------------------------------------------------------------------------------
# Resolver
# ---------------------------------------------------------------------------------------------


class EntityState(_Frozen):
    """Serialised state of one resolved entity."""

    id: str
    surfaces: dict[str, int] = Field(default_factory=dict)
    context_surfaces: dict[str, int] = Field(default_factory=dict)
    type_votes: dict[str, int] = Field(default_factory=dict)


class ResolverState(_Frozen):
    """All an :class:`EntityResolver` knows; ``model_dump_json`` / ``model_validate_json``."""

    version: Literal[1] = 1
    entities: tuple[EntityState, ...] = ()
    aliases: dict[str, str] = Field(default_factory=dict)
    #: acronym -> (ACL of the defining document, entity id), for definitions in non-public
    #: documents: they resolve only in documents every reader of which may read the definition
    scoped_acronyms: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = Field(
        default_factory=dict
    )


_MAX_SURFACES = 64
_MAX_ALIASES_OUT = 32
_TYPE_PRIORITY: dict[str, int] = {
    "DATE": 5,
    "PRODUCT": 4,
    "PERSON": 3,
    "ORG": 2,
    "PLACE": 1,
    "OTHER": 0,
}


@dataclass(slots=True)
class _Entity:
    id: str
    surfaces: Counter[str] = field(default_factory=Counter)
    context_surfaces: Counter[str] = field(default_factory=Counter)
    type_votes: Counter[str] = field(default_factory=Counter)

    def add_surface(self, surface: str, counter: Counter[str]) -> None:
        if surface in counter or len(counter) < _MAX_SURFACES:
            counter[surface] += 1

    @property
    def type(self) -> EntityType:
        votes = {t: n for t, n in self.type_votes.items() if t != "OTHER" and n > 0}
        if not votes:
            return "OTHER"
        best = max(votes.items(), key=lambda kv: (kv[1], _TYPE_PRIORITY.get(kv[0], 0)))[0]
        return best if best in ENTITY_TYPES else "OTHER"

    @property
    def name(self) -> str:
        forms: Counter[str] = self.surfaces or self.context_surfaces or Counter({self.id: 1})
        any_mixed = any(not _is_shouting(f) for f in forms)

        def score(kv: tuple[str, int]) -> tuple[bool, int, bool, int, str]:
            form, count = kv
            well_formed = not (any_mixed and _is_shouting(form)) and not form[:1].islower()
            plain = form.split(" ", 1)[0].rstrip(".").lower() not in _HONORIFICS
            return (well_formed, count, plain, len(form), form)

        return max(forms.items(), key=score)[0]

    def record(self) -> EntityRecord:
        name = self.name
        counts = self.surfaces + self.context_surfaces
        aliases = sorted((f for f in counts if f != name), key=lambda f: (-counts[f], f))
        return EntityRecord(
            id=self.id, name=name, type=self.type, aliases=tuple(aliases[:_MAX_ALIASES_OUT])
        )


#: A normalised part code: letters and digits in one token (``fp2``, ``x200``).
_CODE_KEY_RE = re.compile(r"(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]+")


def display_rank(form: str) -> int:
    """How good a surface form is as an entity's display name; higher is better.

    The rule, independent of the order documents arrive in (so the stored name is deterministic):
    a form that does not start in lower case and is not all capitals beats one that does or is;
    then a form without a leading honorific (``Dr.``) beats one with it; then the longer form
    wins (``Ada Lovelace`` over ``Lovelace``, ``Feed Pump FP-2`` over ``FP-2``). The graph writer
    keeps the highest-ranked form ever offered, ties going to the alphabetically first.
    """
    well_formed = not form[:1].islower() and not _is_shouting(form)
    plain = form.split(" ", 1)[0].rstrip(".").lower() not in _HONORIFICS
    return int(well_formed) * 200_000 + int(plain) * 100_000 + min(len(form), 99_999)


def _is_shouting(form: str) -> bool:
    letters = [c for c in form if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


@dataclass(frozen=True, slots=True)
class _Shape:
    bare_key: str | None  # single-word reference (maybe after an honorific): a possible surname
    surname_key: str | None  # for person-shaped full names: the last name's key


@functools.lru_cache(maxsize=1 << 16)
def _shape(surface: str, key: str) -> _Shape:
    words = [w for w in re.split(r"\s+", surface.strip()) if w]
    while len(words) > 1 and words[0].rstrip(".").lower() in _HONORIFICS:
        words = words[1:]
    if len(words) == 1:
        w = _clean_surface(words[0])
        if (
            w
            and w[0].isupper()
            and not _is_shouting(w)
            and w.replace("-", "").replace("'", "").isalpha()
        ):
            return _Shape(bare_key=normalise_name(w), surname_key=None)
        return _Shape(None, None)
    tokens = key.split()
    if not 2 <= len(tokens) <= 4:
        return _Shape(None, None)
    for w in words:
        core = w.rstrip(".,")
        if not core:
            return _Shape(None, None)
        if core.lower() in _NAME_PARTICLES:
            continue
        if not core[0].isupper() or any(c.isdigit() for c in core):
            return _Shape(None, None)
        if len(core) > 1 and _is_shouting(core) and not _ROMAN_RE.match(core):
            return _Shape(None, None)
    for t in tokens:
        if t in _ORG_CUES or t in _PLACE_CUES or t in _CONNECTORS - _NAME_PARTICLES:
            return _Shape(None, None)
    if tokens[0] in _STOP:
        return _Shape(None, None)
    content = [t for t in tokens if t not in _NAME_SUFFIXES]
    if len(content) < 2 or len(content[-1]) < 2:
        return _Shape(None, None)
    return _Shape(bare_key=None, surname_key=content[-1])


class EntityResolver:
    """De-duplicates mentions into entities; its state survives between batches and processes.

    Seed it with the graph's entities (:meth:`from_existing`) for an incremental ingest, or
    persist :meth:`state` and restore with :meth:`from_state`.
    """

    def __init__(self) -> None:
        self._entities: dict[str, _Entity] = {}
        self._aliases: dict[str, str] = {}
        self._scoped: dict[str, list[tuple[tuple[str, ...], str]]] = {}

    # -- construction / persistence ---------------------------------------------------------

    @classmethod
    def from_existing(
        cls,
        entities: Iterable[EntityRecord | tuple[str, str, str, Iterable[str]]],
    ) -> EntityResolver:
        """A resolver that knows entities already stored: records or ``(id, name, type, aliases)``.

        Ids are kept as given; the name and every alias (normalised) become lookup keys unless
        another entity already owns them.
        """
        resolver = cls()
        records = [
            e
            if isinstance(e, EntityRecord)
            else EntityRecord(
                id=e[0], name=e[1] or e[0], type=_coerce_type(e[2]), aliases=tuple(e[3])
            )
            for e in entities
        ]
        for rec in records:
            ent = resolver._entities.setdefault(rec.id, _Entity(rec.id))
            ent.surfaces[rec.name] += 1
            for alias in rec.aliases:
                if alias and alias != rec.name:
                    ent.add_surface(alias, ent.surfaces)
            ent.type_votes[rec.type] += 3
            resolver._aliases[rec.id] = rec.id
        for rec in records:
            for form in (rec.name, *rec.aliases):
                key = normalise_name(form)
                if key:
                    resolver._aliases.setdefault(key, rec.id)
        return resolver

    @classmethod
    def from_state(cls, state: ResolverState) -> EntityResolver:
        resolver = cls()
        for es in state.entities:
            resolver._entities[es.id] = _Entity(
                es.id, Counter(es.surfaces), Counter(es.context_surfaces), Counter(es.type_votes)
            )
        resolver._aliases = {k: v for k, v in state.aliases.items() if v in resolver._entities}
        for eid in resolver._entities:
            resolver._aliases.setdefault(eid, eid)
        resolver._scoped = {
            k: [(acl, e) for acl, e in v if e in resolver._entities]
            for k, v in state.scoped_acronyms.items()
        }
        return resolver

    def state(self) -> ResolverState:
        return ResolverState(
            entities=tuple(
                EntityState(
                    id=e.id,
                    surfaces=dict(e.surfaces),
                    context_surfaces=dict(e.context_surfaces),
                    type_votes=dict(e.type_votes),
                )
                for e in sorted(self._entities.values(), key=lambda e: e.id)
            ),
            aliases=dict(sorted(self._aliases.items())),
            scoped_acronyms={k: tuple(v) for k, v in sorted(self._scoped.items())},
        )

    # -- queries ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entities)

    def __contains__(self, entity_id: object) -> bool:
        return entity_id in self._entities

    def lookup(self, name: str) -> str | None:
        """The id of the entity a name is a known alias of (context-free), or None."""
        key = normalise_name(name)
        return self._aliases.get(key) if key else None

    def record(self, entity_id: str) -> EntityRecord:
        return self._entities[entity_id].record()

    def records(self, entity_ids: Iterable[str] | None = None) -> tuple[EntityRecord, ...]:
        ids = sorted(self._entities if entity_ids is None else set(entity_ids))
        return tuple(self._entities[i].record() for i in ids)

    # -- resolution ---------------------------------------------------------------------------

    def add_alias(self, alias: str, entity_id: str) -> bool:
        """Make ``alias`` resolve to ``entity_id`` unless its key already belongs to an entity."""
        if entity_id not in self._entities:
            raise KeyError(f"unknown entity id {entity_id!r}")
        key = normalise_name(alias)
        if not key or key in self._aliases:
            return self._aliases.get(key) == entity_id
        self._aliases[key] = entity_id
        return True

    def resolve(self, surface: str, type_hint: EntityType = "OTHER") -> str | None:
        """Resolve one mention with no document context (a new entity if unknown)."""
        return self.resolve_document([(surface, type_hint)])[0]

    def resolve_document(
        self,
        mentions: Sequence[tuple[str, EntityType]],
        acronyms: Sequence[tuple[str, str]] = (),
        *,
        acl: Sequence[str] = (PUBLIC,),
    ) -> list[str | None]:
        """Resolve the ``(surface, type_hint)`` mentions of one document, in order.

        ``acronyms`` are ``(short, long)`` definitions found in the document; they are registered
        first, so every mention of the acronym in the document resolves to the long form's
        entity. ``acl`` is the document's stored ACL: a definition in a public document holds for
        the whole corpus (the acronym becomes an alias of the entity); one in another document
        holds only in documents whose every reader may read it (their ACL is within its ACL), so
        an acronym never names, to the readers of one document, what only another says it means.
        Returns one entity id per mention; None for a mention that normalises to nothing or is
        an ambiguous bare surname.
        """
        scope = tuple(sorted(set(acl))) or (PUBLIC,)
        public = PUBLIC in scope
        local: dict[str, str] = {}  # acronyms this document may use beyond the global aliases
        for short_key, defined in self._scoped.items():
            for def_acl, eid in defined:
                if not public and set(scope) <= set(def_acl):
                    local.setdefault(short_key, eid)
        for short, long in acronyms:
            long_key, short_key = normalise_name(long), normalise_name(short)
            if not long_key or not short_key or long_key == short_key:
                continue
            eid = self._aliases.get(long_key) or self._create(long_key)
            if public:
                self._aliases.setdefault(short_key, eid)
                if self._aliases[short_key] == eid:
                    ent = self._entities[eid]
                    ent.add_surface(_clean_surface(short), ent.surfaces)
            else:
                local[short_key] = eid
                known = self._scoped.setdefault(short_key, [])
                if (scope, eid) not in known:
                    known.append((scope, eid))

        def lookup(key: str) -> tuple[str, bool]:
            """The entity of ``key`` and whether the mention's surface may name it (not when
            a scoped acronym resolved it: the surface would become a stored alias)."""
            if key in local:  # the document's own or a readable document's definition
                return local[key], False
            return self._aliases.get(key) or self._create(key), True

        results: list[str | None] = [None] * len(mentions)
        surnames: dict[str, set[str]] = {}
        singles: list[tuple[int, str]] = []
        codes: list[int] = []
        tails: dict[str, set[str]] = {}  # part code -> entities of the document ending with it
        for idx, (surface, hint) in enumerate(mentions):
            key = normalise_name(surface)
            if not key:
                continue
            shape = _shape(surface, key)
            if shape.bare_key is not None and hint != "DATE":
                singles.append((idx, shape.bare_key))
                continue
            if _CODE_KEY_RE.fullmatch(key) and hint != "DATE":
                codes.append(idx)
                continue
            eid, may_name = lookup(key)
            if may_name:
                self._observe(eid, surface, hint)
            results[idx] = eid
            last = key.rsplit(" ", 1)
            if len(last) == 2 and _CODE_KEY_RE.fullmatch(last[1]):
                tails.setdefault(last[1], set()).add(eid)
            if (
                shape.surname_key
                and hint not in ("ORG", "PLACE", "PRODUCT", "DATE")
                and self._entities[eid].type in ("PERSON", "OTHER")
            ):
                surnames.setdefault(shape.surname_key, set()).add(eid)

        for idx in codes:
            surface, hint = mentions[idx]
            key = normalise_name(surface)
            named = tails.get(key, set())
            if len(named) == 1:  # "FP-2" after "Feed Pump FP-2" in the same document
                eid = next(iter(named))
                ent = self._entities[eid]
                ent.add_surface(_clean_surface(surface), ent.context_surfaces)
            else:
                eid, may_name = lookup(key)
                if may_name:
                    self._observe(eid, surface, hint)
            results[idx] = eid

        for idx, bare_key in singles:
            surface, hint = mentions[idx]
            people = surnames.get(bare_key) if hint != "PLACE" else None
            if people and len(people) == 1:
                eid = next(iter(people))
                ent = self._entities[eid]
                ent.add_surface(_clean_surface(surface), ent.context_surfaces)
                results[idx] = eid
                continue
            if people:
                log.debug("ambiguous bare name (%d candidates) left unresolved", len(people))
                continue
            key = normalise_name(surface)
            eid, may_name = lookup(key)
            if may_name:
                self._observe(eid, surface, hint)
            results[idx] = eid
        return results

    def _create(self, key: str) -> str:
        self._entities[key] = _Entity(key)
        self._aliases[key] = key
        return key

    def _observe(self, eid: str, surface: str, hint: EntityType) -> None:
        ent = self._entities[eid]
        cleaned = _clean_surface(surface)
        if cleaned:
            ent.add_surface(cleaned, ent.surfaces)
        ent.type_votes[hint] += 1


# ---------------------------------------------------------------------------------------------
# Extraction
# ---------------------------------------------------------------------------------------------

_TOKEN_RE = re.compile(
    r"(?P<nl>\n)"
    r"|(?P<dotted>(?:[^\W\d_]\.){2,})"
    r"|(?P<word>\w+(?:[-\u2010\u2011'\u2019&+]\w+)*)"
    r"|(?P<punct>[^\w\s])"
)
_DATE_TEXT_RE = re.compile(
    r"\b(?:"
    r"\d{1,2}(?:st|nd|rd|th)?\s+(?:January|February|March|April|May|June|July|August|September"
    r"|October|November|December)\s*,?\s+\d{4}"
    r"|(?:January|February|March|April|May|June|July|August|September|October|November|December)"
    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?\s*,?)?\s+\d{4}"
    r")\b"
)
_QUOTE_OPEN = {'"', "\u201c"}
_QUOTE_CLOSE = {'"', "\u201d"}
_TERMINATORS = {".", "!", "?"}
_TRANSPARENT = {'"', "\u201c", "\u201d", "'", "\u2018", "\u2019", "(", "[", "{"}

_WORD, _PUNCT, _NL = 0, 1, 2


@dataclass(slots=True)
class _Tokens:
    text: str
    toks: list[str]
    starts: list[int]
    ends: list[int]
    kinds: list[int]
    caps: list[bool]
    initial: list[bool]


@functools.lru_cache(maxsize=1 << 17)
def _is_cap(tok: str) -> bool:
    c0 = tok[0]
    if c0.isupper():
        return True
    if c0.isdigit():
        return any(c.isalpha() for c in tok) and not _UNIT_RE.match(tok)
    if c0.isalpha():
        return any(c.isupper() for c in tok[1:]) or bool(_LOWER_CODE_RE.match(tok))
    return False


def _tokenise(text: str) -> _Tokens:
    toks: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    kinds: list[int] = []
    for m in _TOKEN_RE.finditer(text):
        group = m.lastgroup
        toks.append(m.group())
        starts.append(m.start())
        ends.append(m.end())
        kinds.append(_NL if group == "nl" else _PUNCT if group == "punct" else _WORD)
    caps = [k == _WORD and _is_cap(t) for t, k in zip(toks, kinds, strict=True)]
    initial = [False] * len(toks)
    at_start = True
    for i, (tok, kind) in enumerate(zip(toks, kinds, strict=True)):
        if kind == _NL:
            at_start = True
        elif kind == _PUNCT:
            if tok in _TERMINATORS:
                prev = toks[i - 1] if i and kinds[i - 1] == _WORD else ""
                abbrev = tok == "." and (
                    prev.lower() in _NON_TERMINAL_ABBREV or (len(prev) == 1 and prev.isupper())
                )
                at_start = not abbrev
            elif tok not in _TRANSPARENT:
                at_start = False
        else:
            initial[i] = at_start
            at_start = False
    return _Tokens(text, toks, starts, ends, kinds, caps, initial)


@dataclass(slots=True)
class _Candidate:
    surface: str
    hint: EntityType
    first: int  # token range [first, last]
    last: int
    single_acronym: bool = False


@dataclass(slots=True)
class _Lexicon:
    """Counts, over everything seen, of each word in lower case and capitalised mid-sentence."""

    lower: Counter[str] = field(default_factory=Counter)
    capital: Counter[str] = field(default_factory=Counter)

    def update(self, tk: _Tokens) -> None:
        for tok, kind, cap, init in zip(tk.toks, tk.kinds, tk.caps, tk.initial, strict=True):
            if kind != _WORD:
                continue
            if cap:
                if not init and tok[0].isupper():
                    self.capital[tok.lower()] += 1
            elif tok[0].isalpha():
                self.lower[tok] += 1

    def common(self, word: str, *, strict: bool) -> bool:
        """Is a sentence-initial capitalised ``word`` an ordinary word rather than a name?"""
        lw = word.lower()
        if "-" in lw and lw.split("-", 1)[0] in _STOP | self.lower.keys():
            return True  # "Private-sector", "Well-known"
        if (
            not strict
            and not self.capital[lw]
            and (lw.endswith("ing") or (lw.endswith("ed") and len(lw) >= 7))
            and lw not in _FIRST_NAMES
        ):
            return True  # "Participating", "Sustained": a verb form, not a name
        if strict:  # first word of a multi-word name: only clear evidence strips it
            if lw in _FIRST_NAMES:
                return False
            return lw in _STOP
        if lw in _STOP:
            return True
        lo = self.lower[lw]
        return lo > 0 and lo >= self.capital[lw]


def _guess_type(words: list[str], surface: str, prev_word: str) -> EntityType:
    lows = [w.rstrip(".").lower() for w in words]
    if not lows:
        return "OTHER"
    if lows[0] in _HONORIFICS or lows[0] in ("sir", "dame", "lord", "lady"):
        return "PERSON"
    if any(low in _ORG_CUES for low in lows) or lows[-1] in _CORP_SUFFIXES:
        return "ORG"
    if any(low in _PLACE_CUES for low in lows):
        return "PLACE"
    if any(any(c.isdigit() for c in w) for w in words):
        return "PRODUCT"
    if len(words) == 1 and _is_shouting(surface):
        return "PLACE" if normalise_name(surface) in _PLACE_ACRONYMS else "ORG"
    if len(words) >= 2 and (
        lows[0] in _FIRST_NAMES
        or any(len(w) == 2 and w[0].isupper() and w[1] == "." for w in words[1:-1])
        or lows[-1] in ("jr", "sr")
    ):
        return "PERSON"
    if len(words) == 1 and lows[0] in _KNOWN_PLACES:
        return "PLACE"
    if prev_word in _PREP_PLACE:
        return "PLACE"
    return "OTHER"


def _schwartz_hearst(short: str, long: str) -> bool:
    """Does ``short`` abbreviate ``long`` (Schwartz & Hearst 2003, right-to-left char match)?"""
    s = [c.lower() for c in short if c.isalnum()]
    lf = long.lower()
    if len(s) < 2 or len(lf.split()) < 2 or not lf or lf[0] != s[0]:
        return False
    si, li = len(s) - 1, len(lf) - 1
    while si >= 0:
        c = s[si]
        while li >= 0 and (lf[li] != c or (si == 0 and li > 0 and lf[li - 1].isalnum())):
            li -= 1
        if li < 0:
            return False
        li -= 1
        si -= 1
    return len(lf.split()) <= min(len(s) + 5, 2 * len(s))


def _looks_acronym(tok: str) -> bool:
    uppers = sum(1 for c in tok if c.isupper())
    return 2 <= len(tok) <= 10 and uppers >= 2 and tok[0].isupper() and not _ROMAN_RE.match(tok)


class RuleEntityExtractor:
    """The offline extractor: rules plus corpus statistics, no model.

    It keeps an :class:`EntityResolver` (``resolver``) and word statistics across calls, so the
    same entity gets the same id in every batch. Seed the resolver with
    ``EntityResolver.from_existing(...)`` for an incremental ingest.
    """

    def __init__(self, resolver: EntityResolver | None = None, *, max_run_tokens: int = 10) -> None:
        self.resolver = resolver if resolver is not None else EntityResolver()
        self.max_run_tokens = max_run_tokens
        self._lexicon = _Lexicon()
        self._observed = False

    def observe(self, texts: Iterable[str]) -> None:
        """Count the words of ``texts`` (a whole job) once; later extractions stop learning."""
        for text in texts:
            self._lexicon.update(_tokenise(text))
        self._observed = True

    def extract(
        self,
        chunks: Sequence[tuple[str, str]],
        *,
        document_ids: Sequence[str] | None = None,
        document_acls: Mapping[str, Sequence[str]] | None = None,
    ) -> ExtractionResult:
        if document_ids is not None and len(document_ids) != len(chunks):
            raise ValueError(
                f"document_ids has {len(document_ids)} items but chunks has {len(chunks)}; "
                "pass one document id per chunk or none"
            )
        tokenised = [_tokenise(text) for _, text in chunks]
        if not self._observed:
            for tk in tokenised:
                self._lexicon.update(tk)

        # group chunk indexes by document, in order of first appearance
        groups: dict[str, list[int]] = {}
        for i in range(len(chunks)):
            groups.setdefault(document_ids[i] if document_ids is not None else "", []).append(i)

        per_chunk: list[Counter[str]] = [Counter() for _ in chunks]
        acls = document_acls or {}
        for doc_id, indexes in groups.items():
            surfaces, owners, acronyms = self._document_mentions(
                [chunks[i][1] for i in indexes], [tokenised[i] for i in indexes]
            )
            owners = [indexes[j] for j in owners]
            ids = self.resolver.resolve_document(
                surfaces, acronyms, acl=acls.get(doc_id) or (PUBLIC,)
            )
            for owner, eid in zip(owners, ids, strict=True):
                if eid is not None:
                    per_chunk[owner][eid] += 1

        mention_counts: dict[tuple[str, str], int] = {}
        chunk_sets: dict[str, set[str]] = {}
        for (chunk_id, _), counts in zip(chunks, per_chunk, strict=True):
            for eid, n in counts.items():
                mention_counts[(chunk_id, eid)] = mention_counts.get((chunk_id, eid), 0) + n
            chunk_sets.setdefault(chunk_id, set()).update(counts)
        pair_counts: Counter[tuple[str, str]] = Counter()
        for ids_in_chunk in chunk_sets.values():
            pair_counts.update(combinations(sorted(ids_in_chunk), 2))

        touched = {eid for _, eid in mention_counts}
        result = ExtractionResult(
            entities=self.resolver.records(touched),
            mentions=tuple(
                Mention(chunk_id=c, entity_id=e, count=n)
                for (c, e), n in sorted(mention_counts.items())
            ),
            relations=tuple(
                Relation(source_id=a, target_id=b, weight=float(n))
                for (a, b), n in sorted(pair_counts.items())
            ),
        )
        log.debug(
            "extracted %d entities, %d mentions, %d relations from %d chunks",
            len(result.entities),
            len(result.mentions),
            len(result.relations),
            len(chunks),
        )
        return result

    # -- candidates ---------------------------------------------------------------------------

    def _document_mentions(
        self, texts: Sequence[str], tokenised: Sequence[_Tokens]
    ) -> tuple[list[tuple[str, EntityType]], list[int], list[tuple[str, str]]]:
        """The ``(surface, type hint)`` mentions of one document's chunks, the index (into
        ``texts``) of the chunk each comes from, and the acronyms the document defines.
        The one place a different source of mentions (an LLM) plugs in; resolution,
        de-duplication, counts and relations stay the same."""
        surfaces: list[tuple[str, EntityType]] = []
        owners: list[int] = []
        acronyms: list[tuple[str, str]] = []
        for j, tk in enumerate(tokenised):
            cands, defs = self._candidates(tk)
            surfaces.extend((c.surface, c.hint) for c in cands)
            owners.extend([j] * len(cands))
            acronyms.extend(defs)
        return surfaces, owners, acronyms

    def _candidates(self, tk: _Tokens) -> tuple[list[_Candidate], list[tuple[str, str]]]:
        n = len(tk.toks)
        consumed = [False] * n
        cands: list[_Candidate] = []
        starts = tk.starts

        # dates (by character span)
        for m in _DATE_TEXT_RE.finditer(tk.text):
            first = last = -1
            for i in range(n):
                if starts[i] >= m.start() and tk.ends[i] <= m.end():
                    consumed[i] = True
                    first = i if first < 0 else first
                    last = i
            if first >= 0:
                cands.append(_Candidate(m.group(), "DATE", first, last))

        # quoted title-case names
        i = 0
        while i < n:
            if tk.kinds[i] == _PUNCT and tk.toks[i] in _QUOTE_OPEN:
                close = next(
                    (j for j in range(i + 1, min(n, i + 12)) if tk.toks[j] in _QUOTE_CLOSE), -1
                )
                if close > i + 1 and self._title_case(tk, i + 1, close - 1):
                    for j in range(i + 1, close):
                        consumed[j] = True
                    surface = tk.text[starts[i + 1] : tk.ends[close - 1]]
                    cands.append(_Candidate(surface, "OTHER", i + 1, close - 1))
                    i = close + 1
                    continue
                if close > i:
                    i = close + 1
                    continue
            i += 1

        # capitalised runs
        i = 0
        while i < n:
            if consumed[i] or not tk.caps[i]:
                i += 1
                continue
            end = self._run_end(tk, i, consumed)
            cand = self._make_candidate(tk, i, end)
            if cand is not None:
                cands.append(cand)
            i = end + 1

        cands.sort(key=lambda c: c.first)
        return self._acronym_definitions(tk, cands)

    @staticmethod
    def _title_case(tk: _Tokens, first: int, last: int) -> bool:
        words = 0
        for j in range(first, last + 1):
            tok = tk.toks[j]
            if tk.kinds[j] != _WORD:
                if tok not in ("'", "-", "\u2019", "&", ":"):
                    return False
                continue
            words += 1
            if words == 1 and not tk.caps[j]:
                return False
            if not tk.caps[j] and tok.lower() not in _TITLE_SMALL:
                return False
        return 1 <= words <= 8

    def _run_end(self, tk: _Tokens, i: int, consumed: list[bool]) -> int:
        """Index of the last token of the capitalised run starting at ``i``."""
        n, toks, kinds, caps = len(tk.toks), tk.toks, tk.kinds, tk.caps

        def word_cap(k: int) -> bool:
            return k < n and kinds[k] == _WORD and caps[k] and not consumed[k]

        end = i
        while True:
            cur = toks[end]
            if cur.endswith(("'s", "\u2019s")) and len(cur) > 2 and end > i:
                break  # "Ada Lovelace's Analytical Engine"; but "King's College" stays whole
            k = end + 1
            if k >= n or consumed[k]:
                break
            if toks[k] == "." and kinds[k] == _PUNCT:
                low = cur.lower()
                if (low in _NON_TERMINAL_ABBREV or (len(cur) == 1 and cur.isupper())) and word_cap(
                    k + 1
                ):
                    end = k + 1
                    continue
                if low in _PERIOD_ABBREV:
                    end = k  # keep the abbreviation's period in the surface
                break
            if tk.starts[k] - tk.ends[end] > 1 and tk.text[tk.ends[end] : tk.starts[k]].count("\n"):
                break
            if word_cap(k):
                end = k
                continue
            if (kinds[k] == _WORD and toks[k].lower() in _CONNECTORS) or toks[k] == "&":
                j = k
                while (
                    j < n
                    and j - k < 2
                    and (
                        (kinds[j] == _WORD and toks[j].lower() in _CONNECTORS and not caps[j])
                        or toks[j] == "&"
                    )
                ):
                    j += 1
                if word_cap(j):
                    end = j
                    continue
                break
            if (
                kinds[k] == _WORD
                and toks[k].isdigit()
                and len(toks[k]) <= 3
                and cur.isalpha()
                and cur.lower() not in _MONTHS
                and cur.lower() not in _NOT_BEFORE_NUMBER
                and not (
                    k + 1 < n and toks[k + 1] in (",", ".") and k + 2 < n and toks[k + 2].isdigit()
                )
            ):
                end = k
            break
        return end

    def _make_candidate(self, tk: _Tokens, i: int, end: int) -> _Candidate | None:
        toks, kinds = tk.toks, tk.kinds
        idx = [j for j in range(i, end + 1) if kinds[j] == _WORD]
        # sentence-initial ordinary words are not names
        if idx and tk.initial[idx[0]]:
            first = toks[idx[0]]
            if (
                not _looks_acronym(first)
                and not any(c.isdigit() for c in first)
                and (
                    self._lexicon.common(first, strict=len(idx) > 1)
                    # "Shares of Acme": a common word before a connector is not part of the name
                    or (
                        len(idx) > 1
                        and toks[idx[1]].lower() in _CONNECTORS
                        and self._lexicon.common(first, strict=False)
                    )
                    # "Historically, ...": a sentence adverb
                    or (len(idx) == 1 and _ADVERB_RE.search(first) is not None)
                )
            ):
                idx = idx[1:]
        # leading stop words / connectors left over ("In The Hague" keeps "The")
        while idx and (
            toks[idx[0]].lower() in _CONNECTORS - {"the"}
            or (toks[idx[0]].lower() in _FUNCTION and not _looks_acronym(toks[idx[0]]))
            or not tk.caps[idx[0]]
        ):
            idx = idx[1:]
        while idx and (
            toks[idx[-1]].lower() in _CONNECTORS
            or toks[idx[-1]] == "&"
            or (toks[idx[-1]].lower() in _FUNCTION and not _looks_acronym(toks[idx[-1]]))
        ):
            idx = idx[:-1]
            end = idx[-1] if idx else end  # "Alphons Kannanthanam Since": drop the tail
        if not idx or len(idx) > self.max_run_tokens:
            return None
        words = [toks[j] for j in idx]
        cut = 0
        head, _, tail = words[-1].rpartition("-")
        if (
            head
            and tail.isalpha()
            and tail.islower()
            and (tail in _STOP or self._lexicon.lower[tail] > 0)
        ):
            cut = len(tail) + 1  # "New York-based", "Trinidadian-born": drop the suffix
            words[-1] = head
        if len(words) == 1:
            w = words[0]
            low = w.lower().rstrip(".")
            if (
                (low in _STOP and not _looks_acronym(w))
                or low in _MONTHS
                or low in _WEEKDAYS
                or low in _TITLE_WORDS
                or low in _CORP_SUFFIXES
                or low.replace(".", "") in _ERAS
                or len(w) == 1
                or (_ROMAN_RE.match(w) and len(w) <= 4)
            ):
                return None
        elif all(w.lower() in _STOP or w.lower() in _CONNECTORS for w in words):
            return None
        elif (
            len(words) == 2
            and words[1].isdigit()
            and self._lexicon.lower[words[0].lower()] > self._lexicon.capital[words[0].lower()]
        ):
            return None  # "Length 37", "Chapter 11": an ordinary word and a number
        surface = tk.text[tk.starts[idx[0]] : tk.ends[end] - cut if cut else tk.ends[end]]
        prev = idx[0] - 1
        prev_word = toks[prev].lower() if prev >= 0 and kinds[prev] == _WORD else ""
        hint = _guess_type(words, surface, prev_word)
        return _Candidate(
            surface, hint, idx[0], end, single_acronym=len(words) == 1 and _looks_acronym(words[0])
        )

    @staticmethod
    def _acronym_definitions(
        tk: _Tokens, cands: list[_Candidate]
    ) -> tuple[list[_Candidate], list[tuple[str, str]]]:
        """Find ``Long Form (LF)`` and ``LF (Long Form)``; drop the parenthesised mention."""
        toks = tk.toks
        defs: list[tuple[str, str]] = []
        drop: set[int] = set()
        for a, (c, d) in enumerate(pairwise(cands)):
            paren = c.last + 1
            if paren >= len(toks) or toks[paren] != "(" or d.first != paren + 1:
                continue
            closer = d.last + 1
            if closer < len(toks) and toks[closer] not in (")", ";", ","):
                continue
            if d.single_acronym and not c.single_acronym and _schwartz_hearst(d.surface, c.surface):
                defs.append((d.surface, c.surface))
                drop.add(a + 1)
            elif (
                c.single_acronym and not d.single_acronym and _schwartz_hearst(c.surface, d.surface)
            ):
                defs.append((c.surface, d.surface))
                drop.add(a + 1)
        return [c for a, c in enumerate(cands) if a not in drop], defs


def split_by_document(
    result: ExtractionResult, chunk_documents: dict[str, str]
) -> dict[str, ExtractionResult]:
    """Cut one batch's extraction into one result per document (``chunk id -> document id``).

    Each document gets its chunks' mentions, the entities they mention and, as relations, the
    pairs of entities mentioned together in one of its chunks (weight: how many of its chunks).
    """
    records = {e.id: e for e in result.entities}
    mentions: dict[str, list[Mention]] = {}
    per_chunk: dict[str, set[str]] = {}
    for m in result.mentions:
        mentions.setdefault(chunk_documents[m.chunk_id], []).append(m)
        per_chunk.setdefault(m.chunk_id, set()).add(m.entity_id)
    pairs: dict[str, Counter[tuple[str, str]]] = {}
    for chunk_id, ids in per_chunk.items():
        pairs.setdefault(chunk_documents[chunk_id], Counter()).update(combinations(sorted(ids), 2))
    out: dict[str, ExtractionResult] = {}
    for doc in dict.fromkeys(chunk_documents.values()):
        doc_mentions = mentions.get(doc, [])
        mentioned = sorted({m.entity_id for m in doc_mentions})
        out[doc] = ExtractionResult(
            entities=tuple(records[i] for i in mentioned),
            mentions=tuple(doc_mentions),
            relations=tuple(
                Relation(source_id=a, target_id=b, weight=float(n))
                for (a, b), n in sorted(pairs.get(doc, Counter()).items())
            ),
        )
    return out
