"""Stop words, one named set per purpose.

The sets differ on purpose and are kept apart: each was tuned with the code that uses it, and a
merged list would change what that code finds (a question's key terms, the frame words of the
intent classifier, a document query's terms, what may start an entity name). All lower case.
"""

from __future__ import annotations

from kgrag.text.words import word_set

__all__ = [
    "AUXILIARY_VERBS",
    "DOCUMENT_QUERY_STOP_WORDS",
    "FINITE_AUXILIARIES",
    "FUNCTION_WORDS",
    "HAVE_FORMS",
    "MODAL_VERBS",
    "NAME_FUNCTION_WORDS",
    "NAME_STOP_WORDS",
    "QUESTION_STOP_WORDS",
]

QUESTION_STOP_WORDS = word_set("""
a an the of in on at to for from by with and or not is are was were be been who whom whose
what which when where why how does do did this that these those it its as into about than
then there their they he she his her you your we our me my show tell give picture image
photo drawing recording meeting said say
""")
"""Words dropped from a question's key terms (:func:`kgrag.text.tokens.key_terms`) and from its
full-text query: function words and the words that ask for a modality ("picture")."""

FUNCTION_WORDS = word_set("""
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can could did didn't do does doesn't doing don't down
    during each either else ever every few for from further had has have having he her here hers
    herself him himself his how however i if in into is isn't it its itself just least less let
    like many may me might more most much must my myself neither no nor not now of off often on
    once only or other others otherwise our ours ourselves out over own per perhaps please quite
    rather really same shall she should so some such than that the their theirs them themselves
    then there these they this those though through thus to too under until up upon us very via
    was wasn't we were weren't what whatever when whenever where whereas wherever whether which
    while who whoever whom whose why will with within without would yet you your yours yourself
    yourselves one ones get got gets tell show find give list enumerate name named know want need
    can't cannot thing things something anything kind sort type lot lots etc e.g i.e
    summarise summarize summary overview compare comparison difference differences versus vs
    documents document files file docs mention mentions mentioned mentioning say says said
    """)
"""Words that frame a question rather than name its topic: not content words of the query
analysis, and the frames of the intent classifier."""

DOCUMENT_QUERY_STOP_WORDS = word_set(
    """a an the of and or for to in on at by with about from any all every which what who whom
    whose do does did have has had is are was were be been me us you i we they it its this that
    these those there here please can could would should show list give tell find get name
    documents document docs files file sources source summary summarise summarize overview
    compare comparison versus vs between difference differences"""
)
"""Words dropped from the terms a document tool matches against titles, tags and summaries."""

NAME_FUNCTION_WORDS = word_set("""
    a an and or but nor if as at by in on of to for from with into onto upon via per than
    about above across after against along among around before behind below beneath beside
    between beyond during except inside outside over through throughout toward towards under
    until within without this that these those however although though while whereas when
    whenever where wherever whether which who whom whose what whatever why how he she it
    him they them we us you i me is was were
    are be been being am has had have having do does did also thus hence therefore meanwhile
    moreover furthermore nevertheless despite since because unless unlike including according
""")
"""Function words: they never start an entity name, wherever they stand."""

NAME_STOP_WORDS = NAME_FUNCTION_WORDS | word_set("""
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
"""Words that are no entity name on their own nor at a sentence start (plus the function
words)."""

FINITE_AUXILIARIES = word_set("is are was were do does did has have had")
"""The present and past forms of the auxiliaries "be", "do" and "have": two in a wh-question
tell of a clause inside it (kgrag.planner.analysis)."""

MODAL_VERBS = word_set("can could may might must shall should will would")
"""The modal auxiliaries (a closed class): a question's "should" or "can" is no word of its
subject (kgrag.agent.anchors)."""

AUXILIARY_VERBS = FINITE_AUXILIARIES | MODAL_VERBS
"""The auxiliary verbs a question is written with ("which licenses *is* kmod released", "what
*can* ..."): the finite forms of "be", "do" and "have", and the modals."""

HAVE_FORMS = word_set("has have had having")
"""The forms of "have": in a question, a verb of possession ("Which country has ...", "What
restrictions does NNAPI have ...") that asks for nothing an answer must write
(kgrag.agent.rows)."""
