"""LLM prices as a setting: the dated built-in table, with models added or repriced by
``KGRAG_LLM_PRICES`` and used by the client the settings build."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from kgrag.agent.providers import llm_client
from kgrag.config import Settings
from kgrag.llm import DEFAULT_PRICES, PRICES_AS_OF, price_table


def test_listed_prices_add_and_replace_models_of_the_built_in_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "KGRAG_LLM_PRICES",
        '[{"model": "my-llama", "input_per_million": 0.5, "output_per_million": 1.5},'
        ' {"model": "gpt-4o", "input_per_million": 1.0}]',
    )
    settings = Settings(llm_model="my-llama", openai_base_url="http://127.0.0.1:9/v1")
    table = price_table(settings.llm_prices)
    assert table.cost("my-llama", 1_000_000, 1_000_000) == pytest.approx(2.0)
    assert table.cost("gpt-4o", 1_000_000, 1_000_000) == pytest.approx(1.0)  # output now free
    assert table.cost("gpt-4o-mini", 1_000_000) == pytest.approx(0.15)  # the rest as built in
    client = llm_client(settings)
    assert client is not None and client.prices == table
    hash(settings)  # the settings stay hashable


def test_without_listed_prices_the_dated_table_applies() -> None:
    assert PRICES_AS_OF
    assert price_table(Settings(_env_file=None).llm_prices) is DEFAULT_PRICES


def test_a_bad_price_names_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGRAG_LLM_PRICES", '[{"model": "x", "input_per_million": -1}]')
    with pytest.raises(ValidationError, match="input_per_million"):
        Settings()
