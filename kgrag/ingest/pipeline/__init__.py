"""The batch ingestion job (:mod:`.ingestor`: inputs -> parsed documents -> embeddings and
entities -> graph writes), its options (:mod:`.options`), its report and progress
(:mod:`.report`) and the ACL changes it makes (:mod:`.acl_changes`)."""

from kgrag.ingest.build import Failure
from kgrag.ingest.pipeline.acl_changes import AclPolicy
from kgrag.ingest.pipeline.ingestor import Ingestor, Runner, parse_item
from kgrag.ingest.pipeline.options import MAX_GLOB_CHARS, IngestOptions, check_glob
from kgrag.ingest.pipeline.report import (
    IngestReport,
    Note,
    ProgressCallback,
    ProgressEvent,
    Skip,
)

__all__ = [
    "MAX_GLOB_CHARS",
    "AclPolicy",
    "Failure",
    "IngestOptions",
    "IngestReport",
    "Ingestor",
    "Note",
    "ProgressCallback",
    "ProgressEvent",
    "Runner",
    "Skip",
    "check_glob",
    "parse_item",
]
