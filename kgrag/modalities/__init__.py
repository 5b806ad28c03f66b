"""Model providers behind small protocols: text embedders, image embedders (CLIP), transcribers."""

from kgrag.modalities.base import (
    ImageEmbedder,
    TextEmbedder,
    Transcriber,
    Transcript,
    TranscriptSegment,
)

__all__ = ["ImageEmbedder", "TextEmbedder", "Transcriber", "Transcript", "TranscriptSegment"]
