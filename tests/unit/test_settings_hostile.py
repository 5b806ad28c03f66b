"""Hostile values of the operations settings (issue 22) and of the path settings (an empty or
blank path): each is refused when the settings are read, with a message naming the ``KGRAG_*``
variable, so ``kgrag serve`` stops at startup (exit 3, one line) instead of crashing later (a
background prune whose cut-off is not a date, a drain that never ends, a busy loop of prunes, a
price that makes every cost infinite, a 90 MB model written into the working directory)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError
from pydantic_settings import SettingsError

from kgrag.cli.commands import _settings_problem
from kgrag.config import Settings

KGRAG = Path(sys.executable).parent / "kgrag"

HOSTILE = [
    ("KGRAG_LLM_PRICES", "not json"),
    ("KGRAG_LLM_PRICES", ""),
    ("KGRAG_LLM_PRICES", '[{"model": "m", "input_per_million": 1'),
    ("KGRAG_LLM_PRICES", "{}"),
    ("KGRAG_LLM_PRICES", '[{"model": "m", "input_per_million": -1}]'),
    ("KGRAG_LLM_PRICES", '[{"model": "m", "input_per_million": NaN}]'),
    ("KGRAG_LLM_PRICES", '[{"model": "m", "input_per_million": 1e400}]'),
    ("KGRAG_LLM_PRICES", '[{"model": "", "input_per_million": 1}]'),
    ("KGRAG_LLM_PRICES", '[{"model": "m", "input_per_million": "cheap"}]'),
    ("KGRAG_SHUTDOWN_TIMEOUT_S", "-1"),
    ("KGRAG_SHUTDOWN_TIMEOUT_S", "nan"),
    ("KGRAG_SHUTDOWN_TIMEOUT_S", "inf"),
    ("KGRAG_SHUTDOWN_TIMEOUT_S", "1e300"),
    ("KGRAG_SHUTDOWN_TIMEOUT_S", ""),
    ("KGRAG_SHUTDOWN_TIMEOUT_S", "thirty"),
    ("KGRAG_TRACE_RETENTION_DAYS", "-3"),
    ("KGRAG_TRACE_RETENTION_DAYS", "nan"),
    ("KGRAG_TRACE_RETENTION_DAYS", "inf"),
    ("KGRAG_TRACE_RETENTION_DAYS", "1e300"),
    ("KGRAG_TRACE_RETENTION_DAYS", ""),
    ("KGRAG_TRACE_RETENTION_DAYS", "30d"),
    ("KGRAG_TRACE_RETENTION_KEEP_LAST", "-1"),
    ("KGRAG_TRACE_RETENTION_KEEP_LAST", "99999999999999999999999"),
    ("KGRAG_TRACE_RETENTION_KEEP_LAST", "1e3"),
    ("KGRAG_TRACE_RETENTION_KEEP_LAST", "2.5"),
    ("KGRAG_TRACE_RETENTION_KEEP_LAST", ""),
    ("KGRAG_TRACE_RETENTION_INTERVAL_S", "0"),
    ("KGRAG_TRACE_RETENTION_INTERVAL_S", "-60"),
    ("KGRAG_TRACE_RETENTION_INTERVAL_S", "1e-300"),
    ("KGRAG_TRACE_RETENTION_INTERVAL_S", "nan"),
    ("KGRAG_TRACE_RETENTION_INTERVAL_S", "inf"),
    ("KGRAG_TRACE_RETENTION_INTERVAL_S", "1e300"),
    ("KGRAG_TRACE_RETENTION_INTERVAL_S", "hourly"),
    ("KGRAG_TRACE_PRUNE_DUTY", "0"),
    ("KGRAG_TRACE_PRUNE_DUTY", "0.001"),
    ("KGRAG_TRACE_PRUNE_DUTY", "-0.25"),
    ("KGRAG_TRACE_PRUNE_DUTY", "1.5"),
    ("KGRAG_TRACE_PRUNE_DUTY", "nan"),
    ("KGRAG_TRACE_PRUNE_DUTY", "inf"),
    ("KGRAG_TRACE_PRUNE_DUTY", ""),
    ("KGRAG_TRACE_PRUNE_DUTY", "25%"),
    ("KGRAG_OTEL_SPANS", "maybe"),
    ("KGRAG_OTEL_SPANS", ""),
    ("KGRAG_OTEL_SPANS", "2"),
    # a path setting: Path("") is the working directory, Path("  ") a folder named by spaces
    ("KGRAG_MODEL_CACHE", ""),
    ("KGRAG_MODEL_CACHE", "   "),
    ("KGRAG_DATA_DIR", ""),
    ("KGRAG_DATA_DIR", "\t"),
    ("KGRAG_API_KEYS_FILE", ""),
    ("KGRAG_JWT_PUBLIC_KEY_FILE", " "),
    ("KGRAG_JWT_JWKS_FILE", ""),
    ("KGRAG_RERANK_RULES", " "),
    ("KGRAG_INGEST_ROOTS", '["/srv/docs", " "]'),
]


@pytest.mark.parametrize(("variable", "value"), HOSTILE)
def test_a_hostile_value_is_refused_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises((ValidationError, SettingsError)) as caught:
        Settings()
    problem = _settings_problem(caught.value)
    assert problem is not None and problem.startswith("invalid configuration: "), problem
    assert variable in problem, problem
    assert "\n" not in problem


def test_the_limits_themselves_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounds are the documented ones: the largest and smallest values still pass."""
    for variable, value in [
        ("KGRAG_LLM_PRICES", '[{"model": "m", "input_per_million": 0, "output_per_million": 1e5}]'),
        ("KGRAG_SHUTDOWN_TIMEOUT_S", "86400"),
        ("KGRAG_TRACE_RETENTION_DAYS", "36500"),
        ("KGRAG_TRACE_RETENTION_KEEP_LAST", "1000000000"),
        ("KGRAG_TRACE_RETENTION_INTERVAL_S", "0.1"),
        ("KGRAG_TRACE_PRUNE_DUTY", "0.01"),
        ("KGRAG_OTEL_SPANS", "false"),
    ]:
        monkeypatch.setenv(variable, value)
    s = Settings()
    assert s.shutdown_timeout_s == 86_400 and s.trace_retention_days == 36_500
    assert s.trace_retention_keep_last == 10**9 and s.trace_retention_interval_s == 0.1
    assert s.trace_prune_duty == 0.01
    assert s.llm_prices[0].output_per_million == 1e5 and s.otel_spans is False


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("KGRAG_TRACE_RETENTION_DAYS", "inf"),
        ("KGRAG_LLM_PRICES", "[{"),
        ("KGRAG_MODEL_CACHE", ""),
    ],
)
def test_kgrag_serve_stops_at_startup_naming_the_variable(
    tmp_path: Path, variable: str, value: str
) -> None:
    """The real command: exit 3 (configuration), one line, no traceback, nothing started."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}
    done = subprocess.run(
        [str(KGRAG), "serve", "--store", f"falkordb-lite:///{tmp_path}/kg.db"],
        env={**env, variable: value},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    assert variable in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "kg.db").exists()
    assert list(tmp_path.iterdir()) == []  # nothing written (an empty model cache: the model)
