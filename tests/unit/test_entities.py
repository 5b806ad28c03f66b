"""Offline entity extraction, normalisation and de-duplication (kgrag.ingest.entities)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from kgrag.ingest.entities import (
    EntityExtractor,
    EntityRecord,
    ExtractionResult,
    Mention,
    MentionMerger,
    MergerState,
    Relation,
    RuleEntityExtractor,
    normalise_name,
)

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
MUSIQUE = DATA / "musique_corpus.json"


def run(*texts: str, extractor: RuleEntityExtractor | None = None) -> ExtractionResult:
    ex = extractor or RuleEntityExtractor()
    return ex.extract([(f"c{i}", t) for i, t in enumerate(texts)])


def ids(result: ExtractionResult) -> set[str]:
    return {e.id for e in result.entities}


def counts(result: ExtractionResult) -> dict[tuple[str, str], int]:
    return {(m.chunk_id, m.entity_id): m.count for m in result.mentions}


def entity(result: ExtractionResult, entity_id: str) -> EntityRecord:
    return next(e for e in result.entities if e.id == entity_id)


# --- normalise_name -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("surface", "expected"),
    [
        ("Dr. Ada Lovelace", "ada lovelace"),
        ("ADA LOVELACE", "ada lovelace"),
        ("Ada Lovelace's", "ada lovelace"),
        ("Ada  Lovelace\u2019s", "ada lovelace"),
        ("ACME Corp.", "acme"),
        ("Acme Corporation", "acme"),
        ("Acme, Inc.", "acme"),
        ("Siemens AG", "siemens"),
        ("Foo Holdings Co. Ltd.", "foo holdings"),
        ("X-200", "x200"),
        ("X200", "x200"),
        ("x 200", "x200"),
        ("X\u2013200", "x200"),
        ("PX-7", "px7"),
        ("COVID-19", "covid19"),
        ("Boeing 747", "boeing 747"),
        ("Act of 1990", "act of 1990"),
        ("U.S.", "us"),
        ("J. R. R. Tolkien", "jrr tolkien"),
        ("J.R.R. Tolkien", "jrr tolkien"),
        ("The Hague", "hague"),
        ("\u201cThe Beatles\u201d", "beatles"),
        ("Zo\u00eb Caf\u00e9", "zoe cafe"),
        ("Gda\u0144sk", "gdansk"),
        ("Stra\u00dfe", "strasse"),
        ("Johnson & Johnson", "johnson and johnson"),
        ("AT&T", "at&t"),
        ("Coca-Cola", "coca cola"),
        ("St. Louis", "st louis"),
        ("Dr. Dre", "dr dre"),  # an honorific is only dropped when two words remain
        ("January 1, 1960", "1960-01-01"),
        ("1 January 1960", "1960-01-01"),
        ("March 2010", "2010-03"),
        ("  ", ""),
        ("-- ; --", ""),
    ],
)
def test_normalise_name(surface: str, expected: str) -> None:
    assert normalise_name(surface) == expected
    assert normalise_name(expected) == expected  # an id normalises to itself


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_normalise_name_is_idempotent(text: str) -> None:
    once = normalise_name(text)
    assert normalise_name(once) == once


# --- merges ---------------------------------------------------------------------------------


def test_person_variants_resolve_to_one_entity() -> None:
    r = run(
        "Dr. Ada Lovelace was an English mathematician who worked with Charles Babbage.",
        "Lovelace wrote the first published algorithm. Ada Lovelace's notes were signed A.A.L.",
        "A plaque reading ADA LOVELACE hangs in Marylebone.",
    )
    lovelace = [e for e in r.entities if "lovelace" in e.id]
    assert [e.id for e in lovelace] == ["ada lovelace"]
    assert lovelace[0].name == "Ada Lovelace"
    assert lovelace[0].type == "PERSON"
    assert {"Dr. Ada Lovelace", "Lovelace", "ADA LOVELACE"} <= set(lovelace[0].aliases)
    c = counts(r)
    assert c[("c0", "ada lovelace")] == 1
    assert c[("c1", "ada lovelace")] == 2  # "Lovelace" and "Ada Lovelace's"
    assert c[("c2", "ada lovelace")] == 1
    assert "charles babbage" in ids(r)


def test_bare_surname_before_the_full_name_in_the_same_document() -> None:
    r = run("Babbage designed the engine.", "Charles Babbage was born in London in 1791.")
    assert counts(r)[("c0", "charles babbage")] == 1
    assert "babbage" not in ids(r)


def test_company_variants_resolve_to_one_entity_named_by_its_best_form() -> None:
    r = run(
        "ACME Corp. reported record sales in Ohio; the shares rose.",
        "Shares of Acme Corporation rose after ACME announced a merger.",
        "Acme Corporation was founded in 1921.",
    )
    acme = entity(r, "acme")
    assert acme.name == "Acme Corporation"
    assert acme.type == "ORG"
    assert {"ACME Corp.", "ACME"} <= set(acme.aliases)
    assert sum(m.count for m in r.mentions if m.entity_id == "acme") == 4
    assert not any(e.id != "acme" and "acme" in e.id for e in r.entities)


def test_part_numbers_resolve_to_one_entity() -> None:
    ex = RuleEntityExtractor()
    r = run(
        "The X-200 replaced the X200 prototype. Engineers also tested the PX-7 pump.", extractor=ex
    )
    assert {"x200", "px7"} <= ids(r)
    assert counts(r)[("c0", "x200")] == 2
    assert entity(r, "x200").type == "PRODUCT"
    assert ex.resolver.resolve("x 200") == "x200"
    assert ex.resolver.lookup("X\u2011200") == "x200"


def test_paris_and_paris_hilton_stay_distinct() -> None:
    r = run(
        "Paris Hilton flew to Paris for the opening. Hilton later said that Paris was beautiful."
    )
    assert {"paris", "paris hilton"} <= ids(r)
    c = counts(r)
    assert c[("c0", "paris")] == 2
    assert c[("c0", "paris hilton")] == 2  # "Hilton" is her surname in this document
    assert entity(r, "paris").type == "PLACE"


def test_ambiguous_surname_resolves_to_nothing() -> None:
    r = run(
        "John Smith founded the shop with his cousin Jane Smith in Leeds.",
        "Smith later sold it.",
    )
    assert {"john smith", "jane smith"} <= ids(r)
    assert "smith" not in ids(r)
    assert not [m for m in r.mentions if m.chunk_id == "c1"]


def test_surnames_resolve_per_document_never_across_the_corpus() -> None:
    ex = RuleEntityExtractor()
    r = ex.extract(
        [
            ("a1", "John Smith opened a bakery in Leeds."),
            ("a2", "Smith still runs it."),
            ("b1", "Jane Smith is a marine biologist."),
            ("b2", "Smith studies coral reefs."),
            ("c1", "Smith was mentioned without a first name."),
        ],
        document_ids=["a", "a", "b", "b", "c"],
    )
    c = counts(r)
    assert c[("a2", "john smith")] == 1
    assert c[("b2", "jane smith")] == 1
    assert c[("c1", "smith")] == 1  # no full name in its document: an entity of its own
    assert "john smith" != "jane smith" and {"john smith", "jane smith", "smith"} <= ids(r)


def test_acronym_definition_links_both_forms_across_batches() -> None:
    ex = RuleEntityExtractor()
    r1 = run(
        "The World Health Organization (WHO) was founded in 1948 in Geneva.",
        "In 2020 the WHO declared a pandemic.",
        extractor=ex,
    )
    who = entity(r1, "world health organization")
    assert who.name == "World Health Organization"
    assert "WHO" in who.aliases
    assert "who" not in ids(r1)
    assert counts(r1)[("c0", "world health organization")] == 1  # the definition counts once
    assert counts(r1)[("c1", "world health organization")] == 1
    r2 = run("A WHO report was published.", extractor=ex)
    assert ids(r2) == {"world health organization"}


def test_reversed_acronym_definition_and_a_non_matching_parenthesis() -> None:
    r = run(
        "NASA (National Aeronautics and Space Administration) launched Apollo 11. "
        "The mission was run from Houston (TX) by Gene Kranz."
    )
    assert "nasa" in ids(r)
    assert "national aeronautics and space administration" not in ids(r)
    assert "apollo 11" in ids(r)
    assert "tx" in ids(r)  # not an abbreviation of "Houston": its own entity
    assert "houston" in ids(r)


def test_types_are_hints_and_never_part_of_identity() -> None:
    resolver = MentionMerger()
    a = resolver.resolve("Washington", "PLACE")
    b = resolver.resolve("Washington", "PERSON")
    c = resolver.resolve("Washington", "PLACE")
    assert a == b == c == "washington"
    assert resolver.record("washington").type == "PLACE"  # the majority vote


def test_type_guesses() -> None:
    r = run(
        "Prof. Marie Curie worked at the University of Paris. She was born on 7 November 1867 "
        "in Warsaw. Her notes mention the Geiger GX-3 counter and Siemens AG."
    )
    types = {e.id: e.type for e in r.entities}
    assert types["marie curie"] == "PERSON"
    assert types["university of paris"] == "ORG"
    assert types["1867-11-07"] == "DATE"
    assert types["warsaw"] == "PLACE"
    assert types["geiger gx3"] == "PRODUCT"
    assert types["siemens"] == "ORG"


# --- what must not be extracted -------------------------------------------------------------


def test_sentence_initial_stop_words_are_not_entities() -> None:
    r = run(
        "However, the committee met in Vienna. The decision was final. In 1990, nothing changed. "
        "After that, Maria Lopez resigned. Born in Lima, she moved to Madrid. It rained."
    )
    assert ids(r) == {"vienna", "maria lopez", "lima", "madrid"}


def test_sentence_initial_word_used_in_lower_case_elsewhere_is_not_a_name() -> None:
    r = run(
        "Participating teams arrived early. Historically, the river flooded. "
        "Many rivers flood often, and the river near Arles flooded too. Rivers matter."
    )
    assert ids(r) == {"arles"}


def test_sentence_initial_name_is_kept() -> None:
    r = run("Kafka wrote in German. Kafka died in 1924.")
    assert {"kafka", "german"} == ids(r)
    assert counts(r)[("c0", "kafka")] == 2


def test_names_with_connectors_quotes_initials_and_numbers() -> None:
    r = run(
        "He met John F. Kennedy at the Bank of America office in St. Louis. Vincent van Gogh "
        'painted there. The band played "Gone with the Wind" and flew on a Boeing 747.'
    )
    assert {
        "john f kennedy",
        "bank of america",
        "st louis",
        "vincent van gogh",
        "gone with the wind",
        "boeing 747",
    } <= ids(r)


def test_lowercase_terms_and_numbers_alone_are_not_entities() -> None:
    r = run("the quick brown fox jumped over 12 lazy dogs in 1999 and the 1990s.")
    assert r.entities == ()
    assert r.mentions == ()
    assert r.relations == ()


# --- mentions and relations -----------------------------------------------------------------


def test_relations_are_co_occurrence_counts_stored_once_per_pair() -> None:
    r = run(
        "Kepler and Galileo corresponded about Jupiter.",
        "Galileo observed Jupiter; Kepler read the report. Galileo wrote back.",
        "Galileo was tried in Rome.",
    )
    rel = {(x.source_id, x.target_id): x.weight for x in r.relations}
    assert all(a < b for a, b in rel)
    assert len(rel) == len(r.relations)
    assert rel[("galileo", "kepler")] == 2.0
    assert rel[("galileo", "jupiter")] == 2.0
    assert rel[("jupiter", "kepler")] == 2.0
    assert rel[("galileo", "rome")] == 1.0
    assert ("kepler", "rome") not in rel and ("rome", "kepler") not in rel
    assert counts(r)[("c1", "galileo")] == 2
    assert len(r.mentions) == len({(m.chunk_id, m.entity_id) for m in r.mentions})


def test_extraction_is_deterministic() -> None:
    texts = [
        "Kepler and Galileo corresponded about Jupiter.",
        "The World Health Organization (WHO) met in Geneva. WHO staff travelled to Lagos.",
    ]
    assert run(*texts) == run(*texts)
    assert run(*texts).model_dump_json() == run(*texts).model_dump_json()


def test_document_ids_must_match_chunks() -> None:
    with pytest.raises(ValueError, match="one document id per chunk"):
        RuleEntityExtractor().extract([("a", "Rome.")], document_ids=["x", "y"])


# --- models: validation, LLM JSON -----------------------------------------------------------


def test_models_are_frozen_and_checked() -> None:
    rel = Relation(source_id="a", target_id="b", weight=2)
    with pytest.raises(ValidationError):
        setattr(rel, "weight", 3)  # noqa: B010 (the frozen model must refuse it)
    with pytest.raises(ValidationError, match="source_id < target_id"):
        Relation(source_id="b", target_id="a")
    with pytest.raises(ValidationError, match="unknown entity"):
        ExtractionResult(mentions=(Mention(chunk_id="c", entity_id="nobody"),))
    with pytest.raises(ValidationError, match="duplicate entity ids"):
        ExtractionResult(entities=(EntityRecord(id="a", name="A"), EntityRecord(id="a", name="A.")))
    with pytest.raises(ValidationError):
        EntityRecord(id="a", name="A", extra_field=1)  # type: ignore[call-arg]


def test_llm_json_validates_straight_into_the_models() -> None:
    payload = {
        "entities": [
            {"id": "ada lovelace", "name": "Ada Lovelace", "type": "person", "aliases": ["Ada"]},
            {"id": "london", "name": "London", "type": "LOCATION"},
            {"id": "analytical engine", "name": "Analytical Engine", "type": "artifact"},
        ],
        "mentions": [{"chunk_id": "c1", "entity_id": "ada lovelace", "count": 2}],
        "relations": [{"source_id": "ada lovelace", "target_id": "london", "weight": 1}],
    }
    result = ExtractionResult.model_validate_json(json.dumps(payload))
    assert [e.type for e in result.entities] == ["PERSON", "PLACE", "OTHER"]
    assert result.entities[0].aliases == ("Ada",)
    assert isinstance(RuleEntityExtractor(), EntityExtractor)


# --- resolver state -------------------------------------------------------------------------


def test_resolver_state_round_trips_through_json() -> None:
    ex = RuleEntityExtractor()
    run("The World Health Organization (WHO) met Dr. Ada Lovelace in Geneva.", extractor=ex)
    dumped = ex.resolver.state().model_dump_json()
    restored = MentionMerger.from_state(MergerState.model_validate_json(dumped))
    assert restored.state() == ex.resolver.state()
    assert restored.lookup("WHO") == "world health organization"
    again = run("WHO and Ada Lovelace.", extractor=RuleEntityExtractor(restored))
    assert ids(again) == {"world health organization", "ada lovelace"}


def test_seeding_from_existing_graph_entities() -> None:
    resolver = MentionMerger.from_existing(
        [
            ("acme", "Acme Corporation", "ORG", ["ACME"]),
            EntityRecord(id="who-entity", name="World Health Organization", aliases=("WHO",)),
        ]
    )
    r = run(
        "ACME Corp. signed a deal with the World Health Organization. WHO praised Acme.",
        extractor=RuleEntityExtractor(resolver),
    )
    assert ids(r) == {"acme", "who-entity"}  # existing ids kept, even when not normalised
    assert entity(r, "acme").name == "Acme Corporation"
    assert entity(r, "acme").type == "ORG"
    assert counts(r)[("c0", "who-entity")] == 2


# --- a real corpus --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def musique() -> list[dict[str, str]]:
    if not MUSIQUE.exists():
        pytest.skip(f"missing data file {MUSIQUE}")
    return json.loads(MUSIQUE.read_text(encoding="utf-8"))[:200]


def test_musique_passages(musique: list[dict[str, str]]) -> None:
    chunks = [(f"p{i}", p["text"]) for i, p in enumerate(musique)]
    started = time.perf_counter()
    r = RuleEntityExtractor().extract(chunks, document_ids=[c[0] for c in chunks])
    seconds = time.perf_counter() - started
    assert seconds < 15, f"200 passages took {seconds:.1f}s"

    entity_ids = [e.id for e in r.entities]
    normalised = [normalise_name(i) for i in entity_ids]
    assert len(set(normalised)) == len(entity_ids)  # no two entities share a normalised name
    assert normalised == entity_ids  # ids are already normalised
    for name in [
        "Jan Philip Solovej",
        "University of Copenhagen",
        "American Institute of Physics",
        "New South Wales",
        "Queensland",
        "Tasman Sea",
        "Montevideo Crandon Institute",
        "Uruguay",
        "Aire River",
        "InterContinental Hotels Group",
        "Economic Cooperation Administration",
        "Kevin Myers",
    ]:
        assert normalise_name(name) in entity_ids, name
    assert "eca" not in entity_ids  # "Economic Cooperation Administration (ECA)" defines it
    for word in ["the", "however", "in", "it", "he", "she"]:
        assert word not in entity_ids
    mentioned = {m.entity_id for m in r.mentions}
    assert mentioned == set(entity_ids)
    assert all(x.source_id < x.target_id for x in r.relations)
