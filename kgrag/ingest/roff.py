"""Manual pages: roff source (man(7) and mdoc(7) macros, as ``man`` reads them) as plain text.

A man page is a text file (``zstd.1.gz``, ``cscope.1``), but its words sit among requests and
escapes: ``\\fB\\-\\-ultra\\fR`` is what a reader sees as ``--ultra``, and its first line is a
comment or ``.TH "ZSTD" "1" "February 2023"``. :func:`is_roff` tells such a text by its content,
whatever its name; :func:`roff_text` keeps the words (filled into paragraphs, section headings
on lines of their own, no-fill blocks line by line) and titles the page ``zstd(1)``. Requests
that define macros, strings, registers or conditions are dropped, never executed; ``.so``
(include another file) is not followed. A macro the page defines itself is not run either: a
call to it is read as its definition would print it (:func:`page_macros`): pod2man's ``.IX
Item "--all"`` (an index entry, defined to print nothing) gives no words, its ``.Vb 1`` starts
a verbatim block as the ``.nf`` in its body does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgrag.ingest.sections import Heading, line_headings
from kgrag.text.words import word_set

__all__ = [
    "ROFF_MIME",
    "is_roff",
    "man_page_name",
    "man_page_text",
    "read_as_man_page",
    "roff_text",
]

#: The MIME type stored for a document read from roff (a man page), whatever its file's name
#: or compression: what "Which man pages do you have?" lists (:mod:`kgrag.planner.params`).
ROFF_MIME = "text/troff"

#: A man page's file name: the page, its section (1 to 9, with the suffix some sections carry:
#: ``Foo::Bar.3pm``, ``ssl.3ssl``, ``xterm.1x``) and a compression suffix (``zstd.1.gz``).
_MAN_PAGE_NAME = re.compile(r"^(.+)\.([1-9][a-z]{0,8})(?:\.(?:gz|bz2|xz|zst|lz|lzma|Z))?$")


def man_page_name(name: str) -> tuple[str, str] | None:
    """The page and section a man page's file name gives (``zstd.1.gz``: ``("zstd", "1")``),
    None for another name. A name alone does not make a man page (``syslog.1`` is a rotated
    log): :func:`read_as_man_page` asks the content too."""
    found = _MAN_PAGE_NAME.match(name)
    return (found.group(1), found.group(2)) if found else None


def read_as_man_page(name: str, title: str | None, text: str | None) -> bool:
    """Whether a document stored as plain text, named ``name``, titled ``title`` and whose text
    begins with ``text`` (its first passages), was a man page: a man page's file name, and
    either its text is roff source (:func:`is_roff`, as ingestion decides today; kgrag stored
    the source before it read roff) or its title names the file's section as
    :func:`man_page_text` titles a page (``zstd(1)``; kgrag read roff before it stored man
    pages as :data:`ROFF_MIME`)."""
    found = man_page_name(name)
    if found is None:
        return False
    return is_roff(text or "") or (title or "").lower().endswith(f"({found[1]})")


#: Lines read at most to decide whether a text is roff.
_SNIFF_LINES = 300
#: Requests before the title are roff's own (``de``, ``ds``, ``nr``, ``if``, ``de1``): short names.
_MAX_REQUEST_NAME = 3
_CONTROL = re.compile(r"^[.']\s*([^\s\\]*)(.*)$")
_LINE_COMMENT = re.compile(r'\\".*$')
_COMMENT = re.compile(r"^[.']\s*\\\"")
_TABLE_OPTIONS = re.compile(r"[\w\s(),|]*;")
_TABLE_FORMAT = re.compile(r"[lrcnasLRCNAS^_=|\s.biBIfFwWeEtTuUzZpPvVdDxX0-9()-]+")
#: The longest line read as a term its indented body (``.RS``) goes on from: an option's forms.
_MAX_TERM_CHARS = 80
#: A condition on nroff (what ``man`` formats for a terminal) followed by a request: that request.
_NROFF_BRANCH = re.compile(r"^[.']\s*i[ef]\s+n\s+([.'].*)$")
_TITLE_MACRO = re.compile(r"^\.(TH|Dt)\s", re.IGNORECASE)


#: Requests and macros that say how to lay out the text, not what it says: a paragraph break.
_BREAKS = word_set(
    """PP P LP sp br in RS RE ne ad na hy nh ta ti ll HP Pp Lp Bl El Bd Ed It ns rs bp
    EX EE YS"""
)
#: Requests whose line holds no words of the page (definitions, conditions, registers, fonts).
_DROPPED = word_set(
    """ds nr as rm rn am if ie el so tr cc c2 ec eo lf mso do pso ft ps vs fam ss cu ul uf
    ev hc hw lg pc pl mk rt ch wh dt it em ls pn po tm ab ex cs bd fp fl ig Dd Os UC AT
    DT OP als rr rnn aln PD"""
)
#: Alternating-font macros: their arguments are joined without spaces (``.BR ls (1)``).
_ALTERNATING = word_set("BR RB BI IB IR RI")
#: mdoc macros that print a flag: ``.Fl v`` is ``-v``.
_FLAG = "Fl"

_NAMED = {
    "em": "—",
    "en": "–",
    "hy": "-",
    "mi": "-",
    "bu": "•",
    "ci": "•",
    "sq": "▪",
    "aq": "'",
    "dq": '"',
    "lq": "“",
    "rq": "”",
    "oq": "‘",
    "cq": "’",
    "ga": "`",
    "ti": "~",
    "ha": "^",
    "rs": "\\",
    "co": "©",
    "rg": "®",
    "tm": "™",
    "mu": "×",
    "di": "÷",
    "de": "°",
    "pl": "+",
    "eq": "=",
    ">=": "≥",
    "<=": "≤",
    "!=": "≠",
    "->": "→",
    "<-": "←",
    "lh": "☜",
    "rh": "☞",
    "Fo": "«",
    "Fc": "»",
    "fo": "‹",
    "fc": "›",
    "ss": "ß",
    "at": "@",
    "sh": "#",
    "Do": "$",
    "ba": "|",
    "br": "|",
    "sl": "/",
    "lB": "[",
    "rB": "]",
    "lC": "{",
    "rC": "}",
    "la": "⟨",
    "ra": "⟩",
    "ul": "_",
    "Eu": "€",
    "ct": "¢",
    "ps": "¶",
    "sc": "§",
    "+-": "±",
}
_STRINGS = {"lq": "“", "rq": "”", "R": "®", "Tm": "™", "S": "", "Lq": "“", "Rq": "”"}

_ESCAPE = re.compile(
    r"""\\(?:
        f(?:\[[^\]]*\]|\(..|.)          # font change
      | s[-+]?(?:\d\d?|\(\d\d|\[\d+\])   # size change
      | [*](?:\[(?P<str_long>[^\]]*)\]|\((?P<str_two>..)|(?P<str_one>.))   # string
      | n[-+]?(?:\[[^\]]*\]|\(..|.)      # number register
      | \((?P<two>..)                    # two-letter glyph
      | \[(?P<long>[^\]]*)\]             # long glyph name
      | [hvwoNlLDXbxkzZ]'[^']*'          # motions, drawings, widths: no words
      | [mMF](?:\[[^\]]*\]|\(..|.)         # colours, font family
      | (?P<char>[-.'`"\\e &|^:%)~0c!tpdruaE{}/,acpk])
    )""",
    re.VERBOSE,
)


def is_roff(text: str) -> bool:
    """Whether ``text`` is roff source: a title request (``.TH``, mdoc's ``.Dt``) among its first
    lines, with only comments, other requests and macro definitions before it (pod2man's and
    rst2man's preambles are some 130 lines)."""
    skip_until: str | None = None
    for line in text.splitlines()[:_SNIFF_LINES]:
        request = _request(line)
        if skip_until is not None:
            skip_until = None if request and request[0] == skip_until else skip_until
            continue
        if not line.strip() or _COMMENT.match(line):
            continue
        if _TITLE_MACRO.match(line):
            return True
        if request is None:
            if line.startswith("\\"):  # "\{\" continues a request
                continue
            return False
        if len(request[0]) > _MAX_REQUEST_NAME:  # ".hidden files are ...": a sentence
            return False
        skip_until = _definition_end(*request)
    return False


@dataclass(frozen=True)
class PageMacro:
    """What a macro defined by the page itself (``.de Vb``) does, as far as its text goes."""

    prints_arguments: bool  #: a text line of its body uses an argument (``\\$1``)
    fill: bool | None  #: True when its body holds ``.fi``, False for ``.nf``, else None


def page_macros(lines: list[str]) -> dict[str, PageMacro]:
    """The macros ``lines`` define with ``.de`` (at the top or inside a condition), each read
    over all its definitions: it prints its arguments if any body prints one."""
    found: dict[str, PageMacro] = {}
    body: list[str] | None = None
    name = end = ""
    for line in lines:
        request = _request(line.strip())
        if body is not None:
            if request is not None and request[0] == end:
                found[name] = _page_macro(body, found.get(name))
                body = None
            else:
                body.append(line.strip())
            continue
        if request is not None and request[0] in ("de", "de1", "dei") and request[1]:
            name, args = request[1][0], request[1]
            end = args[1] if len(args) > 1 else "."
            body = []
    return found


def _page_macro(body: list[str], before: PageMacro | None) -> PageMacro:
    prints = any("\\$" in line for line in body if _request(line) is None)
    requests = [r[0] for r in map(_request, body) if r is not None]
    fill = True if "fi" in requests else False if "nf" in requests else None
    if before is not None:
        prints = prints or before.prints_arguments
        fill = before.fill if fill is None else fill
    return PageMacro(prints_arguments=prints, fill=fill)


def _definition_end(name: str, args: list[str]) -> str | None:
    """The line that ends the macro definition or ignored block ``name`` starts, if it does."""
    if name == "ig":
        return args[0] if args else "."
    if name in ("de", "de1", "am", "am1", "dei", "ami"):
        return args[1] if len(args) > 1 else "."
    return None


def _request(line: str) -> tuple[str, list[str]] | None:
    """A control line's request name and arguments (``.  am URL``: "am", ["URL"]; ``..``:
    "."; ``.el\\{\\``: "el"), or None for a text line."""
    m = _CONTROL.match(line)
    if m is None:
        return None
    return m.group(1), _arguments(_LINE_COMMENT.sub("", m.group(2)).strip())


def _glyph(name: str) -> str:
    if name.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
        return chr(int(name[1:], 16))
    return _NAMED.get(name, "")


def _replace(m: re.Match[str]) -> str:
    char = m.group("char")
    if char is not None:
        return {
            "-": "-",
            ".": ".",
            "'": "'",
            "`": "`",
            "\\": "\\",
            "e": "\\",
            "E": "\\",
            " ": " ",
            "~": " ",
            "0": " ",
            "t": "\t",
        }.get(char, "")
    for name in ("two", "long"):
        if m.group(name) is not None:
            return _glyph(m.group(name))
    for name in ("str_long", "str_two", "str_one"):
        if m.group(name) is not None:
            return _STRINGS.get(m.group(name), "")
    return ""


def _inline(line: str) -> str:
    """``line`` without its escapes: fonts and sizes go, glyphs become their characters."""
    line = _LINE_COMMENT.sub("", line)  # a comment to the end of the line
    return _ESCAPE.sub(_replace, line)


def _arguments(rest: str) -> list[str]:
    """A request's arguments: separated by spaces, a double-quoted one may hold spaces. They are
    read in copy mode, as troff reads a macro's arguments: ``\\\\`` is one backslash, so
    ``.B "\\-\\-show\\\\-limits"`` (xargs(1)) prints "--show-limits", not "--show\\-limits"."""
    return [
        (a if a else q.replace('""', '"')).replace("\\\\", "\\")
        for q, a in re.findall(r'"((?:[^"]|"")*)"?|(\S+)', rest)
    ]


def _macro_text(name: str, args: list[str]) -> str:
    if name in _ALTERNATING:
        return "".join(args)
    if name == _FLAG:
        return " ".join("-" + a if re.match(r"\w", a) else a for a in args)
    return " ".join(args)


def _title(args: list[str]) -> str | None:
    if not args:
        return None
    name = _inline(args[0]).strip()
    if name.isupper():
        name = name.lower()
    section = _inline(args[1]).strip() if len(args) > 1 else ""
    return f"{name}({section})" if section else name or None


def roff_text(source: str) -> tuple[str, str | None]:
    """The words of a man page, paragraph by paragraph, and its title (``zstd(1)``) if its
    ``.TH`` or ``.Dt`` names one."""
    text, title, _ = man_page_text(source)
    return text, title


def man_page_text(source: str) -> tuple[str, str | None, tuple[Heading, ...]]:
    """:func:`roff_text`'s text and title, and its section headings (``.SH`` at level 1,
    ``.SS`` at level 2)."""
    paragraphs: list[str] = []
    marks: list[tuple[int, int, str]] = []  # (paragraph, level, text)
    current: list[str] = []
    title: str | None = None
    fill = True
    skip_until: str | None = None  # the end of a macro definition or an ignored block
    in_table_format = False
    tag_next = False  # the line after ``.TP`` is the item's tag
    tag_only = False  # the paragraph holds an ``.IP`` tag and nothing else yet

    def flush() -> None:
        text = (" " if fill else "\n").join(s for s in current if s.strip())
        if text.strip():
            paragraphs.append(text.strip())
        current.clear()

    lines = source.replace("\r\n", "\n").split("\n")
    joined: list[str] = []
    for raw in lines:  # ``\c`` at a line's end continues it on the next line
        if joined and joined[-1].endswith("\\c"):
            joined[-1] = joined[-1][:-2] + raw
        else:
            joined.append(raw)
    defined = page_macros(joined)
    for raw in joined:
        line = raw.rstrip()
        nroff = _NROFF_BRANCH.match(line)
        if nroff is not None:  # ".ie n .IP ..." : the branch a terminal's man takes
            line = nroff.group(1)
        request = _request(line)
        if skip_until is not None:
            if request and request[0] == skip_until:
                skip_until = None
            continue
        if in_table_format:  # tbl's options ("allbox;") and column formats ("l l."), if any
            if _TABLE_OPTIONS.fullmatch(line) or _TABLE_FORMAT.fullmatch(line):
                in_table_format = not line.endswith(".")
                continue
            in_table_format = False
        if _COMMENT.match(line):
            continue
        if request is not None:
            name, args = request
            skip_until = _definition_end(name, args)
            if skip_until is not None:
                continue
            if name in ("TH", "Dt"):
                title = title or _title(args)
                continue
            if name in ("SH", "SS", "Sh", "Ss"):
                flush()
                heading = _inline(" ".join(args)).strip()
                if heading:
                    marks.append((len(paragraphs), 1 if name in ("SH", "Sh") else 2, heading))
                    paragraphs.append(heading)
                continue
            if name == "nf":
                flush()
                fill = False
                continue
            if name == "fi":
                flush()
                fill = True
                continue
            if name == "TS":
                flush()
                in_table_format = True
                fill = False
                continue
            if name == "TE":
                flush()
                fill = True
                continue
            if name in ("TP", "TQ"):
                flush()
                tag_next = True
                continue
            if name == "IP":
                tag = _inline(args[0]).strip() if args else ""
                if tag and tag_only and current:  # "-a" then "--all": one item, "-a, --all"
                    current[-1] += ","
                else:
                    flush()
                if tag:
                    current.append("-" if tag in ("•", "*", "-", "o", "▪") else tag)
                tag_only = bool(tag)
                continue
            if name in ("UR", "MT"):
                if args:
                    current.append(_inline(args[0]))
                continue
            if name in ("UE", "ME"):
                if args:
                    current[-1:] = ["".join([*current[-1:], _inline(" ".join(args))])]
                continue
            if name == "RS" and fill and len(current) == 1 and len(current[0]) <= _MAX_TERM_CHARS:
                continue  # DocBook's term (".PP", "-r, --remove", ".RS 4"): its body follows it
            if name in _BREAKS:
                flush()
                continue
            macro = defined.get(name)
            if macro is not None and not macro.prints_arguments:
                if macro.fill is not None:  # pod2man's .Vb / .Ve: a verbatim block
                    flush()
                    fill = macro.fill
                continue
            if name in _DROPPED or not re.fullmatch(r"[A-Za-z][\w]{0,2}", name):
                continue
            text = _inline(_macro_text(name, args))  # .B, .I, .SM, mdoc's .Nm, .Nd, .Ar, ...
        else:
            if line.endswith("\\") and not line.endswith("\\\\"):
                line = line[:-1]  # an escaped newline: the line goes on ("\\{\\" of a condition)
            text = _inline(line)
        tag_only = False
        if tag_next:
            tag_next = False
            current.append(text)
            continue
        if fill:
            current.append(text.strip())
        else:
            current.append(text.replace("\t", " | ") if "\t" in text else text)
    flush()
    return "\n\n".join(paragraphs), title, line_headings(paragraphs, marks, "\n\n")
