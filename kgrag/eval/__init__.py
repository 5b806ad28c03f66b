"""Retrieval evaluation on multi-hop QA datasets (the HippoRAG formats): loaders, recall, runner."""

from kgrag.eval.datasets import Dataset, EvalQuestion, Passage, load_dataset
from kgrag.eval.metrics import recall_at_k
from kgrag.eval.retrieval import RetrievalReport, evaluate_retrieval

__all__ = [
    "Dataset",
    "EvalQuestion",
    "Passage",
    "RetrievalReport",
    "evaluate_retrieval",
    "load_dataset",
    "recall_at_k",
]
