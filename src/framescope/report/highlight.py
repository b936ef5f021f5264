"""Python source as HTML, one fragment per line: Pygments when installed, else escaped text.

Pygments is optional (the ``report`` extra); without it the report is the same, uncoloured.
"""
from __future__ import annotations

import html
from typing import List

# Pygments' CSS classes are scoped under this class, set on every code block.
CODE_CLASS = "hl"


def have_pygments() -> bool:
    try:
        import pygments  # noqa: F401
    except ImportError:
        return False
    return True


def highlight_lines(text: str) -> List[str]:
    """HTML for each line of ``text`` (which may be any text, valid Python or not)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return [html.escape(line) for line in lines]
    # nowrap: Pygments closes and reopens its spans at each newline, so each line stands alone.
    lexer = PythonLexer(stripnl=False, ensurenl=False)
    out = highlight("\n".join(lines), lexer, HtmlFormatter(nowrap=True)).split("\n")
    return out[:len(lines)] + [""] * (len(lines) - len(out))


def style_css() -> str:
    """The CSS for highlighted code, or nothing without Pygments."""
    try:
        from pygments.formatters import HtmlFormatter
    except ImportError:
        return ""
    rules = HtmlFormatter(style="default").get_style_defs("." + CODE_CLASS)
    # Pygments adds rules for bare <pre> and its own line-number tables; the report styles those.
    return "\n".join(line for line in rules.splitlines() if line.startswith("." + CODE_CLASS)) + "\n"
