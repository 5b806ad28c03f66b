"""Pictures found by what their file names say (``graph_query`` template ``named_images``).

The template's candidates are the readable pictures whose titles contain every term of the
question (a substring test, the same on every engine); here a picture is kept only when each term
is a whole word of its name (:func:`kgrag.text.file_names.name_matches`: ``flower.jpg`` for
"flower", not ``cauliflower.jpg``), scored by the share of the name's words the question names,
so that the picture named by the question's words alone comes first. A picture's names are its
title and the names of the files skipped as copies of it (``also_uris``): the best one counts.
The name never counts through similarity: a picture whose name lacks a term is not found here,
whatever CLIP says."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from kgrag.core import Hit
from kgrag.executor.base import StepReader
from kgrag.text.file_names import file_name_title, name_matches, name_words

#: The graph_query template whose candidates are checked here (its ``terms``: the stemmed
#: content words :func:`kgrag.text.file_names.picture_query_terms` gives).
NAMED_IMAGES_TEMPLATE = "named_images"
#: How many candidates the template returns at most before the whole-word check.
NAMED_IMAGES_POOL = 100


def named_images(params: dict[str, Any], k: int, rec: StepReader, step_id: int) -> list[Hit]:
    """The readable pictures whose names have every one of ``params["terms"]`` as a word, best
    first (the larger share of the name the terms make, then the template's title order)."""
    terms = [str(t) for t in params.get("terms") or []]
    if not terms:
        return []
    found = rec.read(
        f"templates/{NAMED_IMAGES_TEMPLATE}",
        {**params, "terms": terms, "k": max(k, NAMED_IMAGES_POOL)},
    )
    scored = [(score, row) for row in found if (score := _name_score(terms, row)) > 0]
    scored.sort(key=lambda s: -s[0])  # stable: ties keep the title order
    return [Hit.from_row({**row, "score": score}, None, step_id) for score, row in scored[:k]]


def _name_score(terms: list[str], row: dict[str, Any]) -> float:
    """The share of its name's words the terms make, for the best of a picture's names that has
    every term as a word (its title, then each copy's file name); 0 when none has."""
    names = [str(row.get("title") or "")]
    names += [
        file_name_title(PurePath(str(u).replace("\\", "/")).stem)
        for u in row.get("also_uris") or ()
    ]
    return max(
        (
            len(set(terms)) / len(words)
            for name in names
            if name_matches(terms, name) and (words := name_words(name))
        ),
        default=0.0,
    )
