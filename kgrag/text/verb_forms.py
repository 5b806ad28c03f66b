"""The other forms of an irregular English verb: ``sent`` is a form of ``send``.

Neither stemmer joins a verb's irregular forms: kgrag's (:mod:`kgrag.text.stemming`) strips
suffixes, the full-text engines' analyzers strip suffixes too (RediSearch) or nothing (Lucene's
standard analyzer), and BM25's tokens (:func:`kgrag.text.tokens.lexical_tokens`) are the words
as written. So "Where should bug reports be sent?" did not match "Send bug reports to ...".
:func:`verb_forms` gives a word's principal parts when it is one of an irregular verb (base,
past, past participle), so a search can ask for each of them.

The table is the closed class of English irregular verbs in everyday use (a grammar's appendix),
not a list chosen for any question; regular verbs are left to the stemmers. A form that is also
another common word ("left", "found", "saw", "lead") is left out where the other sense is the
more frequent one in technical text, so a search for it is not widened to an unrelated verb.
"""

from __future__ import annotations

from functools import cache

from kgrag.text.words import word_set

__all__ = ["verb_forms"]

# base past participle (one verb a line; a slash separates alternatives)
_TABLE = """
arise arose arisen
awake awoke awoken
be was/were been
bear bore borne/born
beat beat beaten
become became become
begin began begun
bend bent bent
bet bet bet
bind bound bound
bite bit bitten
bleed bled bled
blow blew blown
break broke broken
breed bred bred
bring brought brought
build built built
burn burnt burnt
buy bought bought
catch caught caught
choose chose chosen
cling clung clung
come came come
creep crept crept
deal dealt dealt
dig dug dug
do did done
draw drew drawn
dream dreamt dreamt
drink drank drunk
drive drove driven
eat ate eaten
fall fell fallen
feed fed fed
feel felt felt
fight fought fought
flee fled fled
fling flung flung
fly flew flown
forbid forbade forbidden
forget forgot forgotten
forgive forgave forgiven
freeze froze frozen
get got gotten/got
give gave given
go went gone
grind ground ground
grow grew grown
hang hung hung
have had had
hear heard heard
hide hid hidden
hold held held
keep kept kept
kneel knelt knelt
know knew known
lay laid laid
lead led led
lean leant leant
leap leapt leapt
learn learnt learnt
leave left left
lend lent lent
lie lay lain
lose lost lost
make made made
mean meant meant
meet met met
pay paid paid
prove proved proven
ride rode ridden
ring rang rung
rise rose risen
run ran run
say said said
see saw seen
seek sought sought
sell sold sold
send sent sent
shake shook shaken
shine shone shone
shoot shot shot
show showed shown
shrink shrank shrunk
sing sang sung
sink sank sunk
sit sat sat
sleep slept slept
slide slid slid
sling slung slung
speak spoke spoken
speed sped sped
spend spent spent
spin spun spun
spit spat spat
spring sprang sprung
stand stood stood
steal stole stolen
stick stuck stuck
sting stung stung
stink stank stunk
strike struck struck/stricken
string strung strung
strive strove striven
swear swore sworn
sweep swept swept
swim swam swum
swing swung swung
take took taken
teach taught taught
tear tore torn
tell told told
think thought thought
throw threw thrown
tread trod trodden
understand understood understood
undo undid undone
upset upset upset
wake woke woken
wear wore worn
weave wove woven
weep wept wept
win won won
wind wound wound
withdraw withdrew withdrawn
write wrote written
"""

#: Verbs left out: those with a form more often another word in technical text (a noun, an
#: adjective, a direction: "found", "left", "saw", "lead", "ground", "bound", "run", "show"), whose
#: other forms would widen a search for that word, and the auxiliaries every text holds.
_AMBIGUOUS = word_set("""
found left saw lead ground bound wound lay lie lain bore rose fell bit spoke ring string sling
spring sink stick upset run show bet beat dream tread wind tear lean mean deal fly prove be was
were been have had do did done got get can
""")


@cache
def _paradigms() -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for line in _TABLE.strip().splitlines():
        forms = tuple(dict.fromkeys(f for part in line.split() for f in part.split("/")))
        if any(f in _AMBIGUOUS for f in forms):
            continue
        for form in forms:
            out.setdefault(form, [])
            out[form].extend(f for f in forms if f not in out[form])
    return {k: tuple(v) for k, v in out.items()}


def verb_forms(word: str) -> tuple[str, ...]:
    """``word`` (lower case) and, when it is a principal part of an irregular verb, the verb's
    other principal parts (``sent``: ``sent``, ``send``; ``write``: ``write``, ``wrote``,
    ``written``); otherwise ``word`` alone."""
    forms = _paradigms().get(word)
    if not forms:
        return (word,)
    return (word, *(f for f in forms if f != word))
