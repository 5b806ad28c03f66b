"""Questions that ask for a quantity, and sentences that state one.

"How much does a support contract cost?", "How many instances does the dataset have?", "How
long ...", "How old ...", "What percentage ...", "What is the price of ...": the answer is a
number, an amount or a duration. A quoted answer that states none does not answer it, however
many of the question's words it holds ("git clone https://github.com/prometheus/node_exporter.git
..." for the price of a support contract): the extractive answer starts from a sentence stating
a quantity when one holds the question's words (:mod:`kgrag.agent.synthesis`), and the support
test abstains when no quoted sentence states one (:mod:`kgrag.agent.answering`).

A quantity is a number written in digits ("442", "2048 bytes", "0.5%", "5.3 million") or in
words ("two", "a dozen", "four billion"), that the question does not write itself; not a
version ("0.16.0", "9.6", "since Ninja 1.2", "Python 3", "version 3", "v1.2"), a number inside
a name ("ext4", "i386", "40P01", "createuser(1)"), a list item's number ("22. Can I use zlib
...") or a year ("in 2023"), which say no amount.
"""

from __future__ import annotations

import re

from kgrag.ingest.entities.wordlists import MONTHS
from kgrag.text.stopwords import NAME_STOP_WORDS
from kgrag.text.versions import DOTTED_NUMBER

__all__ = ["QUANTITY_WORDS", "asks_quantity", "states_quantity"]

#: The stemmed words a quantity question asks with ("how *many*", "how *much*").
QUANTITY_WORDS = frozenset({"many", "much"})

#: "How many ...", "how much ...", "how long/old/far/big/large/tall/high/heavy/often ...",
#: "what percentage/proportion/share/price/cost/amount/number/size ...", "what is the price of",
#: "what does ... cost", "how much does ... cost".
_ASKS = re.compile(
    r"\bhow\s+(?:many|much|long|old|far|big|large|tall|high|heavy|often|wide|deep)\b"
    r"|\bwhat\s+(?:is\s+the\s+|was\s+the\s+|are\s+the\s+)?"
    r"(?:percentage|percent|proportion|fraction|price|cost|amount|number|size|population)\b"
    # "what is the default shared memory size", "what was the total number of ...": a few words
    # (none a question's verb or preposition) before the quantity's noun; a number only when a
    # word of counting stands before it ("the seal kit number", "the serial number of the
    # drive" name a thing, they count nothing)
    r"|\bwhat\s+(?:is|was|are)\s+the\s+"
    r"(?:(?!(?:of|in|for|on|at|by|to|with|does|did|do|is|was|are|were|has|have)\b)[\w-]+\s+){0,4}?"
    r"(?:percentage|percent|proportion|fraction|price|cost|amount|size|population|"
    r"(?:total|average|mean|maximum|minimum|overall|exact|approximate|estimated|combined)"
    r"\s+number)\b"
    r"|\bwhat\s+(?:does|did|do)\b[^?]*\bcost\b"
    # "... in megabytes?", "... in seconds": the unit the answer is to be given in
    r"|\bin\s+(?:bytes|kilobytes|megabytes|gigabytes|terabytes|kb|kib|mb|mib|gb|gib|bits"
    r"|milliseconds|seconds|minutes|hours|days|weeks|months|years|percent|degrees|metres|meters"
    r"|kilometres|kilometers|miles|feet|inches|kilograms|kg|grams|pounds|tonnes|tons|dollars"
    r"|euros)\s*[?.!]*\s*$",
    re.IGNORECASE,
)

_NUMBER_WORDS = frozenset(
    {
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "hundreds",
        "thousand",
        "thousands",
        "million",
        "millions",
        "billion",
        "billions",
        "dozen",
        "dozens",
        "twice",
        "thrice",
        "triple",
    }
)
#: A number in digits standing alone: not inside a word or a name ("ext4", "40P01", "i386",
#: "md5"), with its thousands separators and decimals ("1,957,200", "0.5").
_DIGITS = re.compile(r"(?<![\w.\-/])(?P<n>\d+(?:[,.]\d+)*)(?P<after>\S*)")
#: Letters then digits right after a number: a code ("40P01", "3D000"), not a unit ("128KiB").
_CODE_REST = re.compile(r"[A-Za-z_]+\d")
#: A version: three or more dotted parts ("0.16.0"), or a release named as one ("9.6, 11").
_VERSION = re.compile(r"\d+(?:\.\d+){2,}")
#: A word naming a release before its number ("version 3", "release 2.0", "rev. 4").
_RELEASE_WORD = re.compile(r"\b(?:versions?|releases?|ver|rev|revision|v)\.?\s*$", re.I)
#: A capitalised word right before a number, and what stands before it: a product's name when
#: it is no function word, no currency and no month ("since Ninja 1.2", "Python 3").
_NAME_BEFORE = re.compile(r"(?P<lead>\S?)\s*\b(?P<name>[A-Z][\w+#]*) $")
_DOTTED = re.compile(DOTTED_NUMBER)
#: A year: four digits from 1500 to 2099 after a word saying when ("in 2023", "since 1998",
#: "July 1998", "July; 1998") or starting a date ("2023-06-10").
_YEAR = re.compile(r"(?:1[5-9]|20)\d\d")
_DATED = re.compile(
    r"\b(?:in|since|from|until|till|by|to|of|during|before|after|year|circa|early|late|mid|"
    + "|".join(sorted(MONTHS, key=len, reverse=True))
    + r")\W{0,2}$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z]+")


def asks_quantity(question: str) -> bool:
    """Whether ``question`` asks for a number, an amount or a duration."""
    return bool(_ASKS.search(question))


#: What a price, a share or a duration is written with: a question asking what something costs
#: is answered in money, one asking what percentage in a share, "how long" in time or length.
_MONEY_ASKED = re.compile(r"\b(?:cost|costs|price|prices|priced|fee|fees|pay|paid|money)\b", re.I)
_MONEY = re.compile(
    r"[$€£¥]|\b(?:dollars?|euros?|pounds?|cents?|usd|eur|gbp|yen|francs?|rupees?)\b", re.I
)
_SHARE_ASKED = re.compile(r"\b(?:percentage|percent|proportion|share)\b", re.I)
_SHARE = re.compile(r"%|\bper\s?cent\b", re.I)
_OLD_ASKED = re.compile(r"\bhow\s+old\b", re.I)
_OLD = re.compile(r"\b(?:years?|old|aged?|months?|weeks?|days?|centur(?:y|ies)|decades?)\b", re.I)
_LONG_ASKED = re.compile(r"\bhow\s+long\b", re.I)
_LONG = re.compile(
    r"\b(?:\d+\s*)?(?:ms|milliseconds?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?"
    r"|months?|years?|decades?|centur(?:y|ies)|km|kilomet(?:re|er)s?|miles?|met(?:re|er)s?|m|ft"
    r"|feet|foot|inch(?:es)?|cm|mm|characters?|bytes?|lines?|words?|pages?)\b",
    re.IGNORECASE,
)

#: A size is written in digits or with a unit of size ("3072 bits", "64 MiB", "a few kilobytes"),
#: not as a number word ("three different styles" states no file size).
_SIZE_ASKED = re.compile(r"\b(?:size|sizes|how\s+(?:big|large))\b", re.I)
_SIZE = re.compile(
    r"\d|\b(?:bytes?|[kmgtp]i?b|kilobytes?|megabytes?|gigabytes?|terabytes?|bits?|blocks?"
    r"|sectors?|pixels?|px)\b",
    re.IGNORECASE,
)


def states_quantity(sentence: str, question: str = "") -> bool:
    """Whether ``sentence`` states a quantity (see the module doc) that ``question`` does not
    write itself ("64 bits" answers nothing for "... when the long type is 64 bits?"), in money
    when the question asks a price, as a share when it asks a percentage, in time or length
    when it asks how long, in years (or months ...) when it asks how old, in digits or units of
    size when it asks a size."""
    asked = set(_numbers(question)) | {w for w in _WORD.findall(question.lower())}
    if not any(n not in asked for n in _numbers(sentence)):
        return False
    for asking, written in (
        (_MONEY_ASKED, _MONEY),
        (_SHARE_ASKED, _SHARE),
        (_LONG_ASKED, _LONG),
        (_OLD_ASKED, _OLD),
        (_SIZE_ASKED, _SIZE),
    ):
        if asking.search(question) and not written.search(sentence):
            return False
    return True


def _numbers(text: str) -> list[str]:
    out: list[str] = []
    first = len(text) - len(text.lstrip())
    for m in _DIGITS.finditer(text):
        n, after = m.group("n"), m.group("after")
        if _VERSION.fullmatch(n) or after[:1] in {"(", "_"} or _CODE_REST.match(after):
            continue  # a version, a call ("f(x)"), a code ("40P01")
        if after[:1] == ")" and re.search(r"\w\($", text[: m.start()]):
            continue  # a manual section ("createuser(1)")
        if m.start() == first and after[:1] in {".", ")"}:
            continue  # a list item's number ("22. Can I use zlib ...", "4) If ...")
        if _YEAR.fullmatch(n) and (_DATED.search(text[: m.start()]) or after[:1] == "-"):
            continue  # a year says when, not how much ("in 2023", "2023-06-10")
        if _names_release(text[: m.start()], n):
            continue  # a release ("since Ninja 1.2", "version 3")
        out.append(n.replace(",", ""))
    out += [w for w in _WORD.findall(text.lower()) if w in _NUMBER_WORDS]
    return out


def _names_release(before: str, number: str) -> bool:
    """Whether ``number``, written after ``before``, is a release's number: after a word naming
    a release ("version 3"), or after a product's name: a capitalised word that is no function
    word, no currency and no month, inside the sentence ("since Ninja 1.2", "needs Python 3"),
    or starting it when the number is dotted ("Ninja 1.2 added ..."; "About 40 ..." is an
    amount)."""
    if _RELEASE_WORD.search(before):
        return True
    found = _NAME_BEFORE.search(before)
    if found is None:
        return False
    name = found.group("name")
    if name.lower() in NAME_STOP_WORDS or name.lower() in MONTHS or _MONEY.fullmatch(name):
        return False
    inside = found.group("lead") not in {"", ".", "!", "?", ":"}
    return inside or bool(_DOTTED.fullmatch(number))
