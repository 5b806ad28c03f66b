"""The entity extractor's word lists (kept small; lower case): name connectors, title words,
corporate suffixes, months, type cues, first names. Stop words and abbreviations shared with other
text code live in :mod:`kgrag.text`."""

from __future__ import annotations

import re

from kgrag.text.abbreviations import HONORIFICS
from kgrag.text.words import word_set

CONNECTORS = word_set(
    "of de del della der den van von da di du des la le the for y al el bin ibn am upon & dos das"
)
NAME_PARTICLES = word_set("de del della der den van von da di du des la le y al el bin ibn")

TITLE_WORDS = HONORIFICS | word_set(
    "sir dame lord lady king queen prince princess president senator gov governor gen general col "
    "colonel capt captain lt sgt judge justice pope saint st secretary minister chairman "
    "director emperor empress chancellor mayor bishop archbishop duke duchess earl count"
)
CORP_SUFFIXES = word_set(
    "inc incorporated ltd limited llc llp plc corp corporation co gmbh ag sa nv bv pty lp srl spa "
    "oyj"
)
ERAS = word_set("ad bc bce ce")
NOT_BEFORE_NUMBER = word_set("ad bc bce ce no nos vol page pages p pp fig figure table chapter")
NAME_SUFFIXES = word_set("jr sr ii iii iv v")

MONTHS = {
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
WEEKDAYS = word_set("monday tuesday wednesday thursday friday saturday sunday")

ORG_CUES = word_set("""
    university college institute institution company corporation corp inc ltd llc gmbh plc
    association society press records party council committee agency bank group club fc
    ministry department organization organisation foundation school academy army navy
    federation league union commission authority board studios studio entertainment airlines
    airways motors systems technologies labs laboratories network broadcasting television
    channel radio church orchestra band team trust fund parliament congress court police
    publishers publishing pictures films media games software holdings industries
    """)
PLACE_CUES = word_set("""
    city county river lake mountain mountains mount mt island islands street avenue road bay
    sea ocean valley province state kingdom republic airport bridge station square desert
    forest peninsula hills district region village town park canal gulf coast harbour harbor
    strait falls beach borough parish township prefecture municipality
    """)
KNOWN_PLACES = word_set("""
    africa asia europe antarctica australia america oceania
    america china india japan france germany italy spain russia canada mexico brazil england
    scotland wales ireland britain egypt israel iran iraq turkey greece poland sweden norway
    denmark finland netherlands belgium switzerland austria portugal argentina chile peru
    london paris berlin rome madrid moscow tokyo beijing delhi washington chicago boston
    """)
PLACE_ACRONYMS = word_set("us usa uk uae ussr eu")
FIRST_NAMES = word_set("""
    ada adam alan albert alexander alice andrew anna anne arthur barbara ben benjamin bill bob
    carl carlos catherine charles charlotte chris christopher daniel david edward elizabeth
    emily emma eric frank franz frederick george grace harry helen henry isaac jack jacob james
    jane jean jennifer john johann jonathan joseph juan karl kate katherine laura louis lucy
    margaret maria marie mark martin mary matthew michael nicholas paul peter philip richard
    robert will samuel sarah sophie stephen steven susan thomas tom victoria walter william wolfgang
    """)
TITLE_SMALL = word_set(
    "a an the and but or nor for so yet at by in of on to up as with from into over upon than via"
)
PREP_PLACE = word_set("in near across throughout outside inside")

ROMAN_RE = re.compile(r"^[IVXLCDM]+$")
UNIT_RE = re.compile(
    r"^\d+(?:st|nd|rd|th|s|km|kg|mg|m|cm|mm|mi|ft|lb|lbs|am|pm|mph|g|kb|mb|gb|tb|hz|khz|mhz|ghz"
    r"|kw|mw|w|v|bc|ad|yo)$",
    re.IGNORECASE,
)
ADVERB_RE = re.compile(
    r"\w{3}(?:ally|ively|ously|ently|antly|edly|ingly|fully|lessly|ably|ibly|arly)$"
)
LOWER_CODE_RE = re.compile(r"^[a-z]{1,4}-?\d+[a-z]?$")
