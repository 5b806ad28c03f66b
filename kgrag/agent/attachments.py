"""Files attached to a question (images and recordings): checked as untrusted input with the
ingestion parsers (size limit, file signature, decodable image), then planned as
``audio_transcription`` / ``image_embedding`` steps whose results feed the later steps:

- a recording: transcribe it, search the text by what it says (``vector_search`` with
  ``query_from``), then find the images related to those passages (``chunk_images``);
- an image (query by example): the most similar stored images (CLIP image to image) are the
  image evidence, and the passages of the documents they are linked to (``image_context``:
  NEAR, PART_OF, DEPICTS) and the entities they depict (``image_entities``) the text evidence.

When the question's own text asks something, it is searched too and fused with the above.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from kgrag.errors import IngestError
from kgrag.executor.attachments import Attachment
from kgrag.ingest.models import SourceItem
from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import FILE_TYPES
from kgrag.modalities.audio import DEFAULT_MAX_MEDIA_SECONDS
from kgrag.planner.builder import PlanBuilder
from kgrag.planner.models import Plan
from kgrag.text import key_terms

#: The question asked when only files are given.
DEFAULT_ATTACHMENT_QUESTION = "What does the attached file ask or show?"

__all__ = ["AttachmentError", "attachment_plan", "check_attachments", "has_own_terms"]

#: At most this many files may be attached to one question.
MAX_ATTACHMENTS = 4

_WORDS = """attached attachment attachments recording audio clip file files image images picture
pictures photo question answer ask asks asked spoken find similar like this these"""
_ATTACHMENT_WORDS = frozenset(_WORDS.split())


class AttachmentError(IngestError):
    """A file attached to a question cannot be used (the message names the file)."""


def check_attachments(
    paths: Sequence[Path], max_bytes: int, *, max_media_seconds: float = DEFAULT_MAX_MEDIA_SECONDS
) -> tuple[Attachment, ...]:
    """Check every attached file as the ingestion parsers do (size, signature, decodable,
    a recording's probed duration)."""
    if len(paths) > MAX_ATTACHMENTS:
        raise AttachmentError(
            f"{len(paths)} files", f"at most {MAX_ATTACHMENTS} files may be attached to a question"
        )
    out = []
    for raw in paths:
        path = Path(raw)
        name = path.name
        kind = FILE_TYPES.get(path.suffix.lower())
        if kind is None or kind[0] not in ("image", "audio"):
            raise AttachmentError(
                name,
                f"unsupported attachment type '{path.suffix or '(none)'}': attach an image "
                "(.png, .jpg, ...) or a recording (.wav, .flac, .mp3, ...)",
            )
        if not path.is_file():
            raise AttachmentError(name, "no such file")
        modality, mime = kind
        try:
            parse(
                SourceItem(path=path.resolve(), modality=modality, mime=mime),
                max_bytes,
                max_media_seconds=max_media_seconds,
            )
        except IngestError as e:
            raise AttachmentError(name, e.reason) from None
        data = path.read_bytes()
        out.append(
            Attachment(
                name=name,
                path=path.resolve(),
                modality="image" if modality == "image" else "audio",
                mime=mime,
                sha256=hashlib.sha256(data).hexdigest(),
                bytes=len(data),
            )
        )
    return tuple(out)


def has_own_terms(question: str) -> bool:
    """Whether the question asks something beyond "see the attached file"."""
    return any(t not in _ATTACHMENT_WORDS for t in key_terms(question))


def attachment_plan(
    question: str, attachments: Sequence[Attachment], *, k: int = 10, images_k: int = 5
) -> Plan:
    """The plan of a question with attachments (see the module docstring)."""
    builder = PlanBuilder()
    add = builder.add

    text_lists: list[int] = []
    image_lists: list[int] = []
    for index, att in enumerate(attachments):
        if att.modality == "audio":
            heard = add(
                "audio_transcription",
                {"attachment": index},
                why=f"transcribe the attached recording {att.name} (Whisper, at query time)",
                modality="audio",
            )
            text_lists.append(
                add(
                    "vector_search",
                    {"query_from": heard, "index": "chunk_embedding", "k": k},
                    [heard],
                    why="search the text by what the recording says",
                )
            )
        else:
            similar = add(
                "image_embedding",
                {"attachment": index, "k": images_k},
                why=f"images similar to the attached {att.name} (CLIP image to image)",
                modality="image",
            )
            image_lists.append(similar)
            text_lists.append(
                add(
                    "graph_query",
                    {"template": "image_context", "inputs": {"ids": similar}, "k": k},
                    [similar],
                    why="passages of the documents those images are linked to "
                    "(NEAR, PART_OF, DEPICTS)",
                )
            )
            add(
                "graph_query",
                {"template": "image_entities", "inputs": {"ids": similar}, "k": k},
                [similar],
                why="entities those images depict",
            )
    if question.strip() and has_own_terms(question):
        text_lists.append(
            add(
                "vector_search",
                {"query": question, "index": "chunk_embedding", "k": k},
                why="dense search for the question's own words",
            )
        )
    text = text_lists[0]
    if len(text_lists) > 1:
        text = add(
            "aggregate",
            {"sources": text_lists, "k": k, "method": "max"},
            text_lists,
            why="every passage at its best similarity over the searches",
            condition=" or ".join(f"step_{s}.status == 'ok'" for s in text_lists),
        )
    if not image_lists:  # no image to go by: the images related to what was found
        image_lists.append(
            add(
                "graph_query",
                {"template": "chunk_images", "inputs": {"ids": text}, "k": 3},
                [text],
                why="images related to those passages (NEAR them, or depicting what they mention)",
                modality="image",
            )
        )
    if len(image_lists) > 1:
        add(
            "aggregate",
            {"sources": image_lists, "k": 3, "method": "rrf"},
            image_lists,
            why="fused image evidence",
            modality="image",
            condition=" or ".join(f"step_{s}.status == 'ok'" for s in image_lists),
        )
    return builder.plan()
