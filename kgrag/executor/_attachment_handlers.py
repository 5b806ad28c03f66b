"""Handlers of the steps that read the files attached to a question (at query time):
``audio_transcription`` (Whisper; the transcript is one hit a later ``vector_search`` reads
through ``query_from``) and ``image_embedding`` (CLIP image encoder; the stored images most
similar to the attached one, query by example). What each step heard or matched is put in
``outcome.details`` for the trace; the attached files themselves are never stored.
"""

from __future__ import annotations

from collections.abc import Mapping

from kgrag.core import Hit
from kgrag.errors import ExecutionError
from kgrag.executor.attachments import Attachment
from kgrag.executor.base import Registration, StepOutcome, StepReader
from kgrag.executor.nearest import read_nearest
from kgrag.planner.models import AudioTranscriptionStep, ImageEmbeddingStep

__all__ = ["ATTACHMENT_HANDLERS"]


def _attachment(rec: StepReader, index: int, modality: str) -> Attachment:
    files = rec.env.attachments.files if rec.env.attachments is not None else ()
    if index >= len(files):
        raise ExecutionError(
            f"the plan reads attachment {index}, but the question has {len(files)} attachment(s)"
        )
    found = files[index]
    if found.modality != modality:
        raise ExecutionError(f"attachment {found.name!r} is {found.modality}, not {modality}")
    return found


def _audio_transcription(
    step: AudioTranscriptionStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    att = _attachment(rec, step.parameters.attachment, "audio")
    factory = rec.env.attachments.transcriber if rec.env.attachments is not None else None
    if factory is None:
        raise ExecutionError(
            f"{att.name}: audio attachments need a transcriber (KGRAG_TRANSCRIBER); none is set"
        )
    transcriber = factory()
    transcript = transcriber.transcribe(att.path, cancel=rec.cancel)
    text = transcript.text
    rec.outcome.query = text or None
    rec.outcome.details = {
        "attachment": att.name,
        "sha256": att.sha256,
        "model": transcriber.model_name,
        "language": transcript.language,
        "duration_s": round(transcript.duration_s, 2),
        "transcript": text,
    }
    if not text:
        return []
    return [
        Hit(
            id=f"attachment:{att.sha256[:16]}:transcript",
            kind="document",
            score=1.0,
            text=text,
            title=att.name,
            provenance=(step.step_id,),
        )
    ]


def _image_embedding(
    step: ImageEmbeddingStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    p = step.parameters
    att = _attachment(rec, p.attachment, "image")
    if rec.env.image_embedder is None:
        raise ExecutionError(f"{att.name}: image attachments need an image embedder (CLIP)")
    embedder = rec.env.image_embedder()
    vector = embedder.embed_images([att.path])[0]
    rows = read_nearest(rec, "vector_images", vector, p.k)
    hits = [Hit.from_row(r, "image", step.step_id) for r in rows]
    rec.outcome.details = {
        "attachment": att.name,
        "sha256": att.sha256,
        "model": embedder.model_name,
        "similar": [{"id": h.id, "document_id": h.document_id, "score": h.score} for h in hits],
    }
    return hits


ATTACHMENT_HANDLERS = (
    Registration(AudioTranscriptionStep, _audio_transcription),
    Registration(ImageEmbeddingStep, _image_embedding),
)
"""The handlers of these steps, for the executor's dispatch table."""
