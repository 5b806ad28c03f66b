"""Name normalisation: :func:`normalise_name` is an entity's identity."""

from __future__ import annotations

import functools
import re
import unicodedata
from datetime import date

from kgrag.ingest.entities.wordlists import CONNECTORS, CORP_SUFFIXES, MONTHS, TITLE_SMALL
from kgrag.text.abbreviations import HONORIFICS

_PUNCT_MAP = {ord(c): "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"}
_PUNCT_MAP.update({ord(c): "'" for c in "\u2018\u2019\u201a\u201b\u2032`\u00b4"})
_PUNCT_MAP.update({ord(c): '"' for c in "\u201c\u201d\u201e\u201f\u2033"})

_MONTH_ALT = "|".join(sorted(MONTHS, key=len, reverse=True))
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
        return _valid_date(int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1)))
    m = _MDY_RE.match(text)
    if m:
        return _valid_date(int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2)))
    m = _MY_RE.match(text)
    if m:
        return _valid_date(int(m.group(2)), MONTHS[m.group(1).lower()], None)
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
        if len(tokens) > 2 and tokens[0] in HONORIFICS:
            tokens, changed = tokens[1:], True
        if len(tokens) > 1 and tokens[-1] in CORP_SUFFIXES:
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
            and out[-1] not in CONNECTORS
            and out[-1] not in TITLE_SMALL
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


def clean_surface(surface: str) -> str:
    s = unicodedata.normalize("NFKC", surface)
    s = " ".join(s.split()).strip(_EDGE_STRIP.replace(".", "").replace("-", ""))
    s = re.sub(r"(?<=\w)['\u2019]s$|(?<=s)['\u2019]$", "", s)
    return s.strip()
