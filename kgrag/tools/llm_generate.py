"""``llm_generate``: ask the configured chat model (only registered when one exists)."""

from __future__ import annotations

import hashlib

from pydantic import Field

from kgrag.core import Frozen, Hit
from kgrag.errors import ExecutionError
from kgrag.tools.base import Tool, ToolContext


class LlmGenerateArgs(Frozen):
    """Arguments of ``llm_generate``."""

    prompt: str = Field(min_length=1, max_length=20_000)
    max_tokens: int = Field(default=512, ge=1, le=8192)


def _run(args: LlmGenerateArgs, ctx: ToolContext) -> list[Hit]:
    from kgrag.llm import ChatMessage

    if ctx.llm is None:
        raise ExecutionError("llm_generate needs an LLM; set KGRAG_LLM_MODEL and an endpoint")
    result = ctx.llm.chat(
        [ChatMessage(role="user", content=args.prompt)], max_tokens=args.max_tokens
    )
    digest = hashlib.sha256(args.prompt.encode()).hexdigest()[:12]
    return [Hit(id=f"tool:llm_generate:{digest}", kind="document", score=1.0, text=result.text)]


LLM_GENERATE = Tool(
    name="llm_generate",
    description="Generate text with the configured chat model from a prompt.",
    arguments=LlmGenerateArgs,
    run=_run,
    needs_llm=True,
)
