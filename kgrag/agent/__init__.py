"""The agent: planning, execution and synthesis behind one object."""
