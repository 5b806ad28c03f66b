"""kgrag."""
