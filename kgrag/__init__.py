"""kgrag: a graph-database-backed multimodal knowledge agent.

Documents, images and recordings go into one property graph (embedded FalkorDB by default,
Neo4j 5 in production); questions become typed multi-hop plans run as Cypher, with a trace node
per step stored back in the graph.
"""

from importlib import metadata as _metadata

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.answer import Answer, Citation
from kgrag.config import Settings
from kgrag.errors import KgragError
from kgrag.ingest.pipeline import IngestReport

__all__ = ["Answer", "Citation", "IngestReport", "KgragError", "KnowledgeAgent", "Settings"]

try:
    __version__ = _metadata.version("kgrag")
except _metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0.0.0+unknown"
