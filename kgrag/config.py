"""Configuration: one Settings model. Only the CLI and the HTTP server read the environment;
library code receives a Settings (or explicit arguments) and never looks at os.environ itself."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from kgrag.errors import ConfigError
from kgrag.llm.prices import PRICES_AS_OF, ListedPrice

DEFAULT_STORE_URI = "falkordb-lite:///./kgrag-data/kg.db"

#: The oldest cut-off a trace prune takes, in days (100 years; much further back is not a date).
MAX_AGE_DAYS = 36_500
#: The most questions a prune keeps per session (the stores take it as a 64-bit parameter).
MAX_KEEP_LAST = 1_000_000_000
#: The longest ``shutdown_timeout_s``: a day (longer is a typo; the drain waits that long).
MAX_SHUTDOWN_TIMEOUT_S = 86_400.0
#: ``trace_retention_interval_s`` bounds: a tenth of a second (tests) to a year.
MIN_RETENTION_INTERVAL_S = 0.1
MAX_RETENTION_INTERVAL_S = 365 * 86_400.0
#: The share of its wall time a trace prune (or an erasure) spends deleting, pausing the rest
#: (kgrag.retention.Pacer): measured at 10,000 questions (BENCHMARKS.md, "Trace retention").
DEFAULT_PRUNE_DUTY = 0.1
#: The smallest duty cycle: a prune a hundred times as long as its work.
MIN_PRUNE_DUTY = 0.01


DEFAULT_LLM_MAX_TOKENS_PER_QUERY = 100_000
"""LLM tokens (prompt + completion) one question may use unless KGRAG_LLM_MAX_TOKENS_PER_QUERY
says otherwise: a question of three iterations (plan, judge, answer, groundedness checks over a
full evidence list of a few thousand tokens each) uses well under half of it."""


def _not_blank(value: object) -> object:
    # Path("") is the working directory and Path("  ") a folder named by spaces: an empty
    # KGRAG_MODEL_CACHE once wrote the 90 MB model into the working directory
    if isinstance(value, str) and not value.strip():
        raise ValueError(
            "an empty or blank path names no folder; unset the variable for the default, or "
            "give a path"
        )
    return value


#: A path setting: an empty or blank value is refused when the settings are read.
SettingPath = Annotated[Path, BeforeValidator(_not_blank)]


def writable_folder(path: Path, setting: str) -> Path:
    """Create folder ``path`` (with its parents) for kgrag to write in, before the first write:
    :class:`~kgrag.errors.ConfigError` naming ``setting`` (``KGRAG_MODEL_CACHE``...) and the
    path when it cannot be created or written (a parent is a file, no permission, a read-only
    file system), instead of an ``OSError`` of whatever writes there first."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(
            f"{setting}: cannot create the folder {path} ({e.strerror or e}); set {setting} to "
            "a folder kgrag may write in"
        ) from e
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{setting}: the folder {path} is not writable; set {setting} to a folder kgrag may "
            "write in"
        )
    return path


class Settings(BaseSettings):
    """Every knob of kgrag. Environment variables use the prefix ``KGRAG_`` (``KGRAG_STORE``...)."""

    model_config = SettingsConfigDict(env_prefix="KGRAG_", extra="ignore", frozen=True)

    store: str = Field(
        DEFAULT_STORE_URI,
        description="store URI: falkordb-lite:///path, falkordb://host:port, neo4j://..., bolt://...",
    )
    graph_name: str = Field("kgrag", description="graph (FalkorDB) or database (Neo4j) name")
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr = SecretStr("")
    fsync: Literal["everysec", "always"] = Field(
        "everysec", description="embedded store: append-only-file fsync policy"
    )

    text_embedder: Literal["local", "openai"] = "local"
    text_model: str | None = Field(
        None, description="local model path/name or OpenAI embedding model"
    )
    text_backend: Literal["auto", "torch", "onnx"] = Field(
        "auto",
        description="local text model runtime: torch (sentence-transformers), onnx (ONNX Runtime, "
        "no torch; exported to <data_dir>/models on first use where torch is installed), or auto: "
        "onnx when onnxruntime is installed and the exported file exists, else torch",
    )
    image_model: str = Field(
        "kgrag-tiny-clip", description="open_clip model name, or kgrag-tiny-clip"
    )
    image_pretrained: str | None = Field(
        None, description="open_clip pretrained tag or checkpoint path"
    )
    transcriber: Literal["auto", "faster-whisper", "openai-whisper"] = "auto"
    whisper_model: str | None = None
    max_media_seconds: float = Field(
        4 * 3600,
        gt=0,
        description="longest recording ingested or attached, in seconds (4 h: a long meeting or "
        "lecture); longer ones are refused after probing, before decoding",
    )

    libreoffice: Literal["auto", "off"] = Field(
        "auto",
        description="read .doc, .xls, .ppt, .ods, .odp and their templates through LibreOffice's "
        "headless soffice when it is installed (auto), or never (off: they are skipped, saying "
        "so), for a service that should not hand untrusted files to LibreOffice; process-wide",
    )

    openai_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    entity_extractor: Literal["rule", "llm"] = Field(
        "rule", description="entity extraction at ingestion: offline rules, or the chat model"
    )
    llm_model: str | None = Field(
        None, description="chat model for planning/synthesis; offline when unset"
    )
    llm_budget_usd: float | None = Field(
        None, ge=0, description="LLM spend allowed per query, in USD; unlimited when unset"
    )
    llm_max_tokens_per_query: int | None = Field(
        DEFAULT_LLM_MAX_TOKENS_PER_QUERY,
        ge=0,
        description="LLM tokens (prompt + completion) one question may use (100,000: three "
        "iterations of plan, judge, answer and checks over a full evidence list, with room; "
        "a runaway loop stops there)",
    )
    max_iterations: int = Field(3, ge=1, le=10, description="retrieval iterations per question")
    max_plan_steps: int = Field(
        32,
        ge=16,
        le=32,
        description="plan steps one question may run over all its iterations "
        "(at least 16: the rule plan with images, reranking and demotion fits)",
    )
    step_timeout_s: float = Field(
        30, gt=0, description="time one plan step may take before it is recorded as failed"
    )
    llm_timeout_s: float = Field(60, gt=0, description="timeout of one LLM HTTP request")
    llm_prices: tuple[ListedPrice, ...] = Field(
        (),
        description="USD per million tokens of models added to or replacing the built-in table "
        f"(OpenAI's list prices as of {PRICES_AS_OF}); JSON, e.g. "
        '[{"model": "my-model", "input_per_million": 0.5, "output_per_million": 1.5}]',
    )

    max_file_bytes: int = Field(200 * 1024 * 1024, gt=0)
    discussed_source_factor: float = Field(
        0.5,
        gt=0,
        le=1,
        description="score factor of sources already cited earlier in a session (1: no demotion)",
    )
    depicts_threshold: float = Field(
        0.939,
        ge=0,
        le=1,
        description="image->entity DEPICTS score threshold; 0.939 is calibrated for the tiny CLIP "
        "(scripts/calibrate_depicts.py); recalibrate for another image model",
    )
    chunk_overlap_tokens: int = Field(32, ge=0)
    batch_size: int = Field(256, gt=0)
    workers: int = Field(1, gt=0)
    writers: int = Field(
        1,
        gt=0,
        le=64,
        description="batches an ingestion job writes at once into Neo4j (concurrent "
        "transactions); the embedded engine takes one writer",
    )
    name_seeds: bool = Field(
        False,
        description="bridge retrieval: the passage holding each name of the question that the "
        "two best passages lack seeds the bridge hop too (kgrag/executor/name_seeds.py; an "
        'experiment, off: BENCHMARKS.md, "Name seeds of the bridge hop")',
    )
    rerank_rules: SettingPath | None = Field(
        None, description="TOML file of metadata-aware rerank rule sets (docs/reranking.md)"
    )
    rerank_ruleset: str | None = Field(
        None,
        description="rule set of rerank_rules that every question's text evidence is reranked "
        "with; unset: only plans that name a rule set rerank by metadata",
    )

    data_dir: SettingPath = Field(
        Path("./kgrag-data"),
        description="folder of the files kgrag writes beside the store: images extracted from "
        "documents, bulk-import files (and <data_dir>/models, read first for the ONNX text model)",
    )
    model_cache: SettingPath | None = Field(
        None,
        description="folder of model files kgrag builds (the ONNX text model); unset: "
        "$XDG_CACHE_HOME/kgrag/models or ~/.cache/kgrag/models. <data_dir>/models is used "
        "first when it holds the file. An empty or blank value (of any path setting) is refused; "
        "a folder that cannot be created or written is a configuration error naming it",
    )

    api_keys_file: SettingPath | None = Field(
        None,
        description="HTTP API: the API key file `kgrag auth add-key` writes (hashes only)",
    )
    jwt_public_key_file: SettingPath | None = Field(
        None, description="HTTP API: PEM public key that verifies JWT bearer tokens"
    )
    jwt_jwks_file: SettingPath | None = Field(
        None, description="HTTP API: local JWKS file whose keys (by kid) verify JWTs"
    )
    jwt_issuer: str | None = Field(None, description="HTTP API: the JWT issuer (iss) required")
    jwt_audience: str | None = Field(None, description="HTTP API: the JWT audience (aud) required")
    jwt_algorithms: tuple[str, ...] = Field(
        ("RS256", "ES256"),
        description="HTTP API: JWT signature algorithms allowed (public-key ones only)",
    )
    jwt_user_claim: str = Field("sub", description="HTTP API: JWT claim naming the user")
    jwt_groups_claim: str = Field("groups", description="HTTP API: JWT claim listing groups")
    jwt_roles_claim: str = Field("roles", description="HTTP API: JWT claim listing kgrag roles")
    allowed_hosts: tuple[str, ...] = Field(
        (),
        description="HTTP API: Host header values accepted (JSON list; '*' any); always the "
        "loopback names and the bound host",
    )
    max_request_bytes: int = Field(1024 * 1024, gt=0, description="HTTP API: largest request body")
    max_concurrent_requests: int = Field(
        32, gt=0, description="HTTP API: requests handled at once; more get 503"
    )
    max_queued_jobs: int = Field(
        64, gt=0, description="HTTP API: ingestion jobs waiting; more get 429"
    )
    shutdown_timeout_s: float = Field(
        30.0,
        ge=0,
        le=MAX_SHUTDOWN_TIMEOUT_S,
        allow_inf_nan=False,
        description="HTTP API: on SIGTERM, seconds the answers in flight get to finish (new "
        "questions and jobs get 503, the running ingestion job stops resumable) before the "
        "server stops (at most a day)",
    )
    trace_retention_days: float | None = Field(
        None,
        ge=0,
        le=MAX_AGE_DAYS,
        allow_inf_nan=False,
        description="HTTP API: the server removes, in the background, the traces of questions "
        "asked more than this many days ago (as `kgrag traces prune --older-than`; at most "
        "36,500), flagged answers excepted; none: it keeps every trace",
    )
    trace_retention_keep_last: int = Field(
        0,
        ge=0,
        le=MAX_KEEP_LAST,
        description="HTTP API: the background prune keeps the N newest questions of each "
        "session whatever their age, those asked outside a session counting as one session "
        "(as `kgrag traces prune --keep-last`)",
    )
    trace_retention_interval_s: float = Field(
        3600.0,
        ge=MIN_RETENTION_INTERVAL_S,
        le=MAX_RETENTION_INTERVAL_S,
        allow_inf_nan=False,
        description="HTTP API: seconds between two background prunes (0.1 to a year)",
    )
    trace_prune_duty: float = Field(
        DEFAULT_PRUNE_DUTY,
        ge=MIN_PRUNE_DUTY,
        le=1,
        allow_inf_nan=False,
        description="the share of its wall time a trace prune or an erasure spends deleting "
        "(0.01 to 1): it pauses the rest, so questions asked meanwhile wait less and the prune "
        "takes 1/duty times its work (the server's background prune, `kgrag traces prune`, "
        "`kgrag forget`)",
    )
    ingest_roots: tuple[SettingPath, ...] = Field(
        (), description="HTTP API: folders POST /ingest may read (JSON list); none: ingest refused"
    )
    otel_spans: bool = Field(
        False,
        description="OpenTelemetry spans of answers, their steps and ingestion jobs, to the "
        "process's tracer provider (pip install 'kgrag[otel]'; kgrag.ops.otel)",
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        description="HTTP API: log lines as text, or as one JSON object a line with request "
        "and query ids (docs/operations.md)",
    )
