"""De-duplication: :class:`MentionMerger` merges the mentions of a batch into entities, across a
document and across the corpus (see the package doc for the rules)."""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kgrag.core import PUBLIC
from kgrag.ingest.entities.models import (
    ENTITY_TYPES,
    EntityRecord,
    EntityState,
    EntityType,
    MergerState,
    coerce_entity_type,
)
from kgrag.ingest.entities.names import clean_surface, normalise_name
from kgrag.ingest.entities.wordlists import (
    CONNECTORS,
    NAME_PARTICLES,
    NAME_SUFFIXES,
    ORG_CUES,
    PLACE_CUES,
    ROMAN_RE,
)
from kgrag.text.abbreviations import HONORIFICS
from kgrag.text.stopwords import NAME_STOP_WORDS

log = logging.getLogger(__name__)


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
        any_mixed = any(not is_shouting(f) for f in forms)

        def score(kv: tuple[str, int]) -> tuple[bool, int, bool, int, str]:
            form, count = kv
            well_formed = not (any_mixed and is_shouting(form)) and not form[:1].islower()
            plain = form.split(" ", 1)[0].rstrip(".").lower() not in HONORIFICS
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
    well_formed = not form[:1].islower() and not is_shouting(form)
    plain = form.split(" ", 1)[0].rstrip(".").lower() not in HONORIFICS
    return int(well_formed) * 200_000 + int(plain) * 100_000 + min(len(form), 99_999)


def is_shouting(form: str) -> bool:
    letters = [c for c in form if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


@dataclass(frozen=True, slots=True)
class _Shape:
    bare_key: str | None  # single-word reference (maybe after an honorific): a possible surname
    surname_key: str | None  # for person-shaped full names: the last name's key


@functools.lru_cache(maxsize=1 << 16)
def _shape(surface: str, key: str) -> _Shape:
    words = [w for w in re.split(r"\s+", surface.strip()) if w]
    while len(words) > 1 and words[0].rstrip(".").lower() in HONORIFICS:
        words = words[1:]
    if len(words) == 1:
        w = clean_surface(words[0])
        if (
            w
            and w[0].isupper()
            and not is_shouting(w)
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
        if core.lower() in NAME_PARTICLES:
            continue
        if not core[0].isupper() or any(c.isdigit() for c in core):
            return _Shape(None, None)
        if len(core) > 1 and is_shouting(core) and not ROMAN_RE.match(core):
            return _Shape(None, None)
    for t in tokens:
        if t in ORG_CUES or t in PLACE_CUES or t in CONNECTORS - NAME_PARTICLES:
            return _Shape(None, None)
    if tokens[0] in NAME_STOP_WORDS:
        return _Shape(None, None)
    content = [t for t in tokens if t not in NAME_SUFFIXES]
    if len(content) < 2 or len(content[-1]) < 2:
        return _Shape(None, None)
    return _Shape(bare_key=None, surname_key=content[-1])


class MentionMerger:
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
    ) -> MentionMerger:
        """A resolver that knows entities already stored: records or ``(id, name, type, aliases)``.

        Ids are kept as given; the name and every alias (normalised) become lookup keys unless
        another entity already owns them.
        """
        resolver = cls()
        records = [
            e
            if isinstance(e, EntityRecord)
            else EntityRecord(
                id=e[0], name=e[1] or e[0], type=coerce_entity_type(e[2]), aliases=tuple(e[3])
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
    def from_state(cls, state: MergerState) -> MentionMerger:
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

    def state(self) -> MergerState:
        return MergerState(
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
                    ent.add_surface(clean_surface(short), ent.surfaces)
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
                ent.add_surface(clean_surface(surface), ent.context_surfaces)
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
                ent.add_surface(clean_surface(surface), ent.context_surfaces)
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
        cleaned = clean_surface(surface)
        if cleaned:
            ent.add_surface(cleaned, ent.surfaces)
        ent.type_votes[hint] += 1
