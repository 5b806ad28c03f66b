"""Text utilities shared by ingestion, planning and the agent: tokenising (:mod:`.tokens`), stop
words (:mod:`.stopwords`), sentence splitting (:mod:`.sentences`), stemming (:mod:`.stemming`)
and abbreviations (:mod:`.abbreviations`). Where two purposes need different word lists or rules,
each has its own named set or function here, so the differences are visible side by side."""

from kgrag.text.sentences import (
    is_numbered_heading,
    sentence_spans,
    sentence_texts,
    simple_sentences,
)
from kgrag.text.stemming import stem
from kgrag.text.tokens import document_terms, key_terms, term_set, terms
from kgrag.text.words import word_set

__all__ = [
    "document_terms",
    "is_numbered_heading",
    "key_terms",
    "sentence_spans",
    "sentence_texts",
    "simple_sentences",
    "stem",
    "term_set",
    "terms",
    "word_set",
]
