"""A document whose text breaks the text model with an error nobody meant fails alone: the batch
it was in is embedded again one document at a time, and the others keep their vectors. A model
that fails as a model (a :class:`~kgrag.errors.ModelError`) still fails the batch, as before, and
a store error still goes through."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from kgrag.config import Settings
from kgrag.errors import ModelError, StoreError
from kgrag.ingest.build import Builder
from kgrag.ingest.models import ParsedDocument, ParsedPage, SourceItem
from kgrag.modalities import factory
from tests.support.embedders import _Wrapped


class _Breaking(_Wrapped):
    """The real text model, failing with ``error`` on any batch holding the word "crash"."""

    def __init__(self, error: Exception) -> None:
        super().__init__(factory.text_embedder(Settings()))
        self.error = error

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if any("crash" in t for t in texts):
            raise self.error
        return self.inner.embed(texts)


def _doc(name: str, text: str) -> ParsedDocument:
    return ParsedDocument(
        source=SourceItem(path=Path(f"/data/{name}"), modality="text", mime="text/plain"),
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        bytes=len(text),
        title=name,
        pages=(ParsedPage(number=None, text=text),),
    )


DOCS = [
    _doc("a.txt", "The lamp room is cleaned every Tuesday."),
    _doc("b.txt", "A crash of the tide gauge was logged in March."),
    _doc("c.txt", "Tide tables are printed each spring."),
]


def test_a_text_that_breaks_the_model_fails_its_document_alone() -> None:
    out = Builder(_Breaking(IndexError("index out of range in self"))).build(DOCS)
    assert [str(e.doc.source.path) for e in out.embedded] == ["/data/a.txt", "/data/c.txt"]
    assert all(len(c.embedding) == 384 for e in out.embedded for c in e.chunks)
    (failure,) = out.failures
    assert failure.path == "/data/b.txt"
    assert failure.reason == (
        "its passages could not be embedded (IndexError: index out of range in self)"
    )


def test_a_model_error_still_fails_the_batch() -> None:
    out = Builder(_Breaking(ModelError("the model server is down"))).build(DOCS)
    assert out.embedded == []
    assert {f.reason for f in out.failures} == {
        "the text model failed on this document's batch: the model server is down"
    }


def test_a_store_error_goes_through() -> None:
    with pytest.raises(StoreError):
        Builder(_Breaking(StoreError("the store went away"))).build(DOCS)
