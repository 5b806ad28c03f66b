"""kgrag where its users already work, each an optional extra: an MCP server (:mod:`.mcp`,
``kgrag[mcp]``), and retrievers for LangChain (:mod:`.langchain`, ``kgrag[langchain]``) and
LlamaIndex (:mod:`.llamaindex`, ``kgrag[llamaindex]``). Nothing here is imported by kgrag
itself."""

#: Import each integration from its module (kgrag.integrations.langchain, ...).
__all__: list[str] = []
