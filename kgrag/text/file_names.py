"""What a picture's file name says it shows, matched word for word with a question.

In real folders a picture's name often says what it shows (``flower.jpg``, ``red_rose-2019.png``,
``BoardLayout.png``, ``Eiffel tower at night.jpeg``), while the names cameras and phones give
(``IMG_2041.JPG``, ``DSC0001.JPG``, ``PXL_20240101_123456.jpg``) say nothing. A small CLIP model
that knows little of the world cannot see a flower; the name can say it. The name's words count
only on a lexical match: :func:`name_matches` holds when every content word of the question
(:func:`picture_query_terms`) is a word of the name (:func:`name_words`), both stemmed with
:func:`kgrag.text.stemming.stem` ("flowers" meets "flower")."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from kgrag.ingest.containers.kinds import compressed_name
from kgrag.text.stemming import stem
from kgrag.text.stopwords import FUNCTION_WORDS, QUESTION_STOP_WORDS
from kgrag.text.words import word_set

__all__ = [
    "CAMERA_WORDS",
    "file_name_title",
    "file_words",
    "folder_words",
    "name_matches",
    "name_words",
    "picture_query_terms",
    "spaced_name",
]

#: The words of the names cameras, phones and apps give pictures: they say nothing of what a
#: picture shows (a trailing number is dropped before the comparison: ``DSC0001`` is ``dsc``).
CAMERA_WORDS = word_set("""
    img image dsc dscn dscf dcim pxl mvimg pict pic gopr gop dji sam wp whatsapp signal
    photo screenshot screen shot scan scanned untitled copy edited final
""")
#: Words of a question that ask for a picture or name a picture's format: no name is matched
#: on them ("a photo of a flower" asks for ``flower``, not for a file named ``photo``).
PICTURE_WORDS = word_set("""
    picture pictures pic pics photo photos photograph photographs image images drawing drawings
    diagram diagrams illustration illustrations figure figures screenshot screenshots snapshot
    snapshots scan scans show shows showing shown depict depicts depicted look looks like file
    files png jpg jpeg gif webp bmp tif tiff heic svg
""")
_CHUNK = re.compile(r"[A-Za-z0-9]+")
_HUMP = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_SKIPPED = QUESTION_STOP_WORDS | FUNCTION_WORDS | PICTURE_WORDS
_SKIPPED_STEMS = frozenset(stem(w) for w in _SKIPPED)


def _content(word: str) -> bool:
    """A lower-cased word that can say what a picture shows: three letters or more, no stop,
    function or picture word, no camera word (with or without its number)."""
    return (
        sum(c.isalpha() for c in word) >= 3
        and word not in _SKIPPED
        and stem(word) not in _SKIPPED_STEMS
        and word.rstrip("0123456789") not in CAMERA_WORDS
    )


def name_words(name: str) -> frozenset[str]:
    """The stemmed content words of a file name (without its extension): each run of letters
    and digits whole and, when it is written in camel case, its parts too (``BoardLayout`` is
    ``boardlayout``, ``board`` and ``layout``). Empty for a camera's name (``IMG_2041``)."""
    out: set[str] = set()
    for chunk in _CHUNK.findall(name):
        if chunk.lower().rstrip("0123456789") in CAMERA_WORDS:
            continue  # and its parts: "WhatsApp" is no "app"
        parts = _HUMP.findall(chunk)
        for word in [chunk, *parts] if len(parts) > 1 else [chunk]:
            lower = word.lower()
            if _content(lower):
                out.add(stem(lower))
    return frozenset(out)


def picture_query_terms(question: str) -> tuple[str, ...]:
    """The stemmed content words of a picture question that a picture's name must all have
    ("Show me a photo of flowers." -> ``("flower",)``), in question order; empty when the
    question names nothing but a kind of picture."""
    out = [stem(w) for w in (c.lower() for c in _CHUNK.findall(question)) if _content(w)]
    return tuple(dict.fromkeys(out))


def name_matches(terms: Sequence[str], name: str) -> bool:
    """Every one of ``terms`` (:func:`picture_query_terms`, in question order) is a word of
    ``name``, alone or written together with the term next to it: "scatter plot" names
    ``scatterplot.png``, "pie chart" ``piechart.svg``."""
    if not terms:
        return False
    words = name_words(name)
    joined: set[int] = set()  # positions of terms found written together with a neighbour
    for i, (a, b) in enumerate(itertools.pairwise(terms)):
        if stem(a + b) in words or a + b in words:
            joined.update((i, i + 1))
    return all(t in words or i in joined for i, t in enumerate(terms))


#: Underscores between two letters or digits: what a file name writes for a space.
_TITLE_SPACES = re.compile(r"(?<=[^\W_])_+(?=[^\W_])")
#: Runs of white space, underscores, dots and pluses: what separates the words of a name written
#: as one identifier.
_IDENTIFIER_SPACES = re.compile(r"[\s_.+]+")


def spaced_name(name: str, *, title: bool = False) -> str:
    """A name written as one identifier, as words. As a ``title`` (a document titled by its
    file's name without its extension): underscores between words are spaces
    (``nnapi_supported_ops``: "nnapi supported ops"); hyphens stay (``zstd-1.5.4``,
    ``2024-03-01``, ``e-mail``), and so do dots and underscores at the ends of a name
    (``__init__``). Else, as words to match: every run of white space, ``_``, ``.`` and ``+``
    is one space, none at the ends (``iso_4217`` -> "iso 4217", ``README.md`` -> "README md";
    a hyphenated name kept)."""
    if title:
        return _TITLE_SPACES.sub(" ", name)
    return _IDENTIFIER_SPACES.sub(" ", name).strip()


def file_name_title(stem: str) -> str:
    """A document's title made of its file's name without its extension (``stem``):
    :func:`spaced_name` as a title."""
    return spaced_name(stem, title=True)


def file_words(uri: str | None) -> str:
    """The words of the name of the file at ``uri``, without its type's suffix (and a
    compression suffix, :func:`kgrag.ingest.containers.kinds.compressed_name`):
    ``/docs/nnapi_supported_ops.md`` -> "nnapi supported ops"."""
    name = (uri or "").replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    name = compressed_name(PurePosixPath(name)).name if name else name
    stem, dot, _ = name.rpartition(".")
    return spaced_name(stem if dot and stem else name)


def folder_words(uri: str | None) -> str:
    """The words of the name of the folder holding the file at ``uri`` (:func:`spaced_name`: a
    hyphenated name such as ``espeak-ng`` kept); empty when it has none."""
    parts = (uri or "").replace("\\", "/").rstrip("/").split("/")
    if len(parts) < 3:  # "a.txt", "/a.txt": no folder named
        return ""
    return spaced_name(parts[-2])
