"""British and American spellings of a word, folded to one form for matching, never for showing.

"Which licence does requests use?" must match "License: Apache-2.0", and "colour" must match
"color". :func:`american` folds a lower-case word to its American spelling; it is applied where
words are compared: :func:`kgrag.text.stemming.stem` (the question's terms, the support test's
words, file names) and :func:`kgrag.text.tokens.lexical_tokens` (BM25, on the question's and the
passages' side alike). The full-text indexes see the text as written, so
:func:`kgrag.planner.rule.fulltext_query` asks for every spelling (:func:`spellings`), and so do
the document tools' substring matches of titles, tags, summaries and entity names
(:func:`term_spellings`, one term whatever its spelling).

Two kinds of difference, kept conservative, since a fold that joins two different words would
make one match the other:

- **Listed words**, with their inflections: -our/-or (colour, behaviour, favour, ...), -re/-er
  (centre, theatre, fibre, and every -metre and -litre), -ce/-se (licence, defence, offence,
  pretence; the verb practise), -ogue/-og (catalogue, dialogue, analogue), a doubled l before
  -ed/-ing/-er (travelled, labelled, modelled, cancelled), -ae-/-oe- (anaemia, oestrogen) and
  single words (grey, aluminium, judgement, programme, mould, sceptic, ...). Not listed: pairs
  whose other spelling is another word (tyre/tire, cheque/check, draught/draft, prise/prize).
- **Two suffix rules**, the regular -ise/-ize and -yse/-yze: ``organised`` -> ``organized``,
  ``normalisation`` -> ``normalization``, ``analysing`` -> ``analyzing``. -ise is the suffix only
  after a root of four or more letters (not rise, wise, noise, raise, advise, revise), not after
  a w (otherwise, likewise, clockwise), and not in the listed words where -ise belongs to the
  root (exercise, promise, precise, surprise, enterprise, compromise, expertise, ...)."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable

from kgrag.text.words import word_set

__all__ = ["american", "spellings", "term_spellings"]


def _forms(
    british: str, american_: str, endings: Iterable[str | tuple[str, str]]
) -> dict[str, str]:
    """British form -> American form for a root and its endings (an ending shared by both, or
    a pair (British ending, American ending))."""
    out: dict[str, str] = {}
    for ending in endings:
        b, a = (ending, ending) if isinstance(ending, str) else ending
        out[british + b] = american_ + a
    return out


_OUR_ENDINGS = ("", "s", "ed", "ing", "ful", "fully", "less", "able", "ably", "ite", "ites")
_OUR = word_set(
    "arbour armour behaviour candour clamour colour endeavour favour fervour flavour harbour "
    "honour humour labour neighbour odour parlour rigour rumour saviour savour splendour tumour "
    "valour vapour vigour"
)
_RE_ENDINGS = (("e", "er"), ("es", "ers"), ("ed", "ered"), ("ing", "ering"))
_RE = word_set("calibre centre fibre lustre meagre sabre sepulchre sombre spectre theatre")
_CE_ENDINGS = ("e", "es", "ed", "ing")
_CE = {"licenc": "licens", "defenc": "defens", "offenc": "offens", "pretenc": "pretens"}
_OGUE_ENDINGS = (("e", ""), ("es", "s"), ("ed", "ed"), ("ing", "ing"))
_OGUE = word_set("analogue catalogue dialogue")
_DOUBLED_L_ENDINGS = (("led", "ed"), ("ling", "ing"), ("ler", "er"), ("lers", "ers"))
_DOUBLED_L = word_set(
    "cancel channel counsel dial fuel label level model signal total travel tunnel"
)
_WORDS = {
    "acknowledgement": "acknowledgment",
    "acknowledgements": "acknowledgments",
    "ageing": "aging",
    "aluminium": "aluminum",
    "anaemia": "anemia",
    "anaesthesia": "anesthesia",
    "anaesthetic": "anesthetic",
    "cosy": "cozy",
    "diarrhoea": "diarrhea",
    "encyclopaedia": "encyclopedia",
    "enrol": "enroll",
    "enrols": "enrolls",
    "enrolment": "enrollment",
    "enrolments": "enrollments",
    "foetus": "fetus",
    "fulfil": "fulfill",
    "fulfils": "fulfills",
    "fulfilment": "fulfillment",
    "haemoglobin": "hemoglobin",
    "instalment": "installment",
    "instalments": "installments",
    "judgement": "judgment",
    "judgements": "judgments",
    "leukaemia": "leukemia",
    "manoeuvre": "maneuver",
    "manoeuvres": "maneuvers",
    "moustache": "mustache",
    "oesophagus": "esophagus",
    "oestrogen": "estrogen",
    "paediatric": "pediatric",
    "programme": "program",
    "programmes": "programs",
    "pyjamas": "pajamas",
    "skilful": "skillful",
}
_TABLE: dict[str, str] = {
    **{k: v for w in _OUR for k, v in _forms(w, w[:-2] + "r", _OUR_ENDINGS).items()},
    **{k: v for w in _RE for k, v in _forms(w[:-1], w[:-2], _RE_ENDINGS).items()},
    **{k: v for b, a in _CE.items() for k, v in _forms(b, a, _CE_ENDINGS).items()},
    **_forms("practis", "practic", ("e", "es", "ed", "ing")),
    **{k: v for w in _OGUE for k, v in _forms(w[:-1], w[:-2], _OGUE_ENDINGS).items()},
    **{k: v for w in _DOUBLED_L for k, v in _forms(w, w, _DOUBLED_L_ENDINGS).items()},
    **_forms("grey", "gray", ("", "s", "ed", "ing", "er", "est", "ish", "ness", "scale")),
    **_forms("mould", "mold", ("", "s", "ed", "ing", "y")),
    **_forms("sceptic", "skeptic", ("", "s", "al", "ally", "ism")),
    **_WORDS,
}
# -metre and -litre words (kilometre, millilitre)
_RE_UNITS = re.compile(r"(.*(?:met|lit))r(e|es)")
_IZE_ENDINGS = "e|es|ed|ing|er|ers|ation|ations|ational"
_ISE = re.compile(rf"([a-z]{{4,}})is({_IZE_ENDINGS})")
_IZE = re.compile(rf"([a-z]{{4,}})iz({_IZE_ENDINGS})")
#: Roots where -ise belongs to the word, no -ize suffix (exercise, promise, surprise).
_ISE_ROOTS = word_set(
    "advert appra appr chast chem circumc comprom compr conc desp disgu enterpr exerc expert "
    "franch improv merchand mort parad porpo prec prem prom repr sunr moonr superv surpr telev "
    "torto treat turquo"
)
_YSE = re.compile(r"([a-z]+)lys(e|es|ed|ing|er|ers)")
_YZE = re.compile(r"([a-z]+)lyz(e|es|ed|ing|er|ers)")
_BRITISH: dict[str, list[str]] = {}
for _b, _a in _TABLE.items():
    _BRITISH.setdefault(_a, []).append(_b)


def _ise_root(root: str) -> bool:
    return not root.endswith("w") and root not in _ISE_ROOTS


@functools.lru_cache(maxsize=1 << 16)
def american(word: str) -> str:
    """``word`` (lower case) in American spelling, if it is a British one this module knows
    (see the module doc); any other word unchanged. Remembered: BM25 reads every word of a
    question's candidate passages through it."""
    if len(word) < 4 or not word.isalpha():
        return word
    found = _TABLE.get(word)
    if found is not None:
        return found
    if m := _RE_UNITS.fullmatch(word):
        return f"{m.group(1)}er{m.group(2)[1:]}"
    if (m := _ISE.fullmatch(word)) and _ise_root(m.group(1)):
        return f"{m.group(1)}iz{m.group(2)}"
    if m := _YSE.fullmatch(word):
        return f"{m.group(1)}lyz{m.group(2)}"
    return word


def spellings(word: str) -> tuple[str, ...]:
    """``word`` and its other spellings (lower case), ``word`` first: what a full-text index,
    which sees the text as written, must be asked for."""
    us = american(word)
    out = [word, us, *_BRITISH.get(us, ())]
    if (m := _IZE.fullmatch(us)) and _ise_root(m.group(1)):
        out.append(f"{m.group(1)}is{m.group(2)}")
    if m := _YZE.fullmatch(us):
        out.append(f"{m.group(1)}lys{m.group(2)}")
    if m := re.fullmatch(r"(.*(?:met|lit))er(s?)", us):
        out.append(f"{m.group(1)}re{m.group(2)}")
    return tuple(dict.fromkeys(out))


#: At most this many spellings of a term of several words (each word's spellings multiply).
MAX_TERM_SPELLINGS = 8


def term_spellings(term: str) -> tuple[str, ...]:
    """A document tool's term (a word, or words separated by spaces, lower case) and its other
    spellings, ``term`` first: what a substring match against titles, tags, summaries, paths and
    entity names must look for, counted as one term ("colour" finds "Color Management" once).
    Of several words, every combination of their spellings, at most
    :data:`MAX_TERM_SPELLINGS`."""
    words = term.split(" ")
    if len(words) == 1:
        return spellings(term)
    combos = itertools.product(*(spellings(w) if w else (w,) for w in words))
    return tuple(" ".join(c) for c in itertools.islice(combos, MAX_TERM_SPELLINGS))
