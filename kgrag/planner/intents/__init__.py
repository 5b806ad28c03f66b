"""The labelled phrasings the intent classifier is trained on (data files only)."""

__all__: list[str] = []
