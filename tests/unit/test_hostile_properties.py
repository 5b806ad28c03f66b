"""Property-based tests for the parsers that read hostile input: plans (they may come from an LLM)
and files (they come from anyone). Whatever the input, the only exception that escapes is the
project's own error for that input (PlanError, IngestError); nothing else, and no hang."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag.errors import IngestError, PlanError
from kgrag.ingest.models import SourceItem
from kgrag.ingest.parsers import parse
from kgrag.planner.models import Plan

_STEP_TYPES = [
    "vector_search",
    "graph_query",
    "multi_hop",
    "filter",
    "rerank",
    "aggregate",
    "llm_call",
    "tool_call",
    "list_documents",
    "document_summary",
    "metadata_search",
    "compare",
    "conditional",
    "DROP",
    "",
]

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["'; MATCH (n) DETACH DELETE n //", "`Chunk` OR 1=1", "../../etc/passwd"]),
)
_json_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
_steps = st.fixed_dictionaries(
    {
        "step_id": st.one_of(st.integers(min_value=-3, max_value=30), st.text(max_size=3)),
        "type": st.sampled_from(_STEP_TYPES),
    },
    optional={
        "modality": st.sampled_from(["text", "image", "audio", "video", 3]),
        "parameters": st.dictionaries(
            st.sampled_from(
                [
                    *("query", "k", "template", "params", "hops", "seeds", "label", "tool"),
                    *("index", "about", "target", "sides", "tags", "modalities", "rules"),
                ]
            ),
            _json_values,
            max_size=5,
        ),
        "dependencies": st.lists(st.integers(min_value=-2, max_value=30), max_size=4),
        "condition": st.one_of(st.none(), st.text(max_size=60)),
        "trace": _json_values,
    },
)
_plans = st.one_of(
    _json_values,
    st.fixed_dictionaries(
        {"plan": st.lists(_steps, max_size=6)},
        optional={"traceability": _json_values},
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_plans)
def test_plan_parse_raises_nothing_but_plan_error(raw: Any) -> None:
    inputs: list[Any] = [json.dumps(raw, default=str)]
    if isinstance(raw, dict):
        inputs.append(raw)
    for data in inputs:
        try:
            plan = Plan.parse(data)
        except PlanError as e:
            assert str(e), "a refusal must say why"
            continue
        # anything accepted round-trips to the same plan
        assert Plan.parse(plan.to_json()) == plan


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_plan_parse_of_random_bytes(data: bytes) -> None:
    with pytest.raises(PlanError):
        Plan.parse(data + b"\x00{")  # never valid JSON: the refusal is PlanError, nothing else


_SUFFIXES = {
    ".txt": ("text", "text/plain"),
    ".md": ("text", "text/markdown"),
    ".pdf": ("pdf", "application/pdf"),
    ".png": ("image", "image/png"),
    ".jpg": ("image", "image/jpeg"),
    ".gif": ("image", "image/gif"),
    ".wav": ("audio", "audio/wav"),
    ".flac": ("audio", "audio/flac"),
    ".mp3": ("audio", "audio/mpeg"),
}
_HEADERS = [
    b"",
    b"%PDF-1.4\n",
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"GIF89a",
    b"RIFF\x00\x00\x00\x00WAVE",
    b"fLaC",
    b"ID3",
]


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    suffix=st.sampled_from(sorted(_SUFFIXES)),
    header=st.sampled_from(_HEADERS),
    body=st.binary(max_size=2048),
)
def test_file_parsers_raise_nothing_but_ingest_error_naming_the_file(
    tmp_path: Path, suffix: str, header: bytes, body: bytes
) -> None:
    path = tmp_path / f"hostile{suffix}"
    path.write_bytes(header + body)
    modality, mime = _SUFFIXES[suffix]
    item = SourceItem(path=path, modality=modality, mime=mime)  # type: ignore[arg-type]
    try:
        parsed = parse(item, max_bytes=1 << 20)
    except IngestError as e:
        assert str(path) in str(e) or path.name in str(e), f"error must name the file: {e}"
        return
    assert parsed.sha256 and parsed.bytes == len(header) + len(body)


def test_file_over_the_size_limit_is_refused_before_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"word " * 1000)
    item = SourceItem(path=path, modality="text", mime="text/plain")
    with pytest.raises(IngestError, match=r"big\.txt"):
        parse(item, max_bytes=100)
