"""HTML building blocks of the report: escaping, pages, links that only point at what exists.

Every piece of text from the dump or the user's files goes through :func:`esc` (or through
Pygments, which escapes it), so a source line such as ``</script><b>`` shows as written.
"""
from __future__ import annotations

import html
import os
import re
from typing import Dict, Iterable, List, Optional, Tuple
from urllib.parse import quote

from framescope import __version__, torch_text
from framescope.report.highlight import CODE_CLASS, highlight_lines
from framescope.dump.records import Dump, Frame, Graph
from framescope.report.readable import where
from framescope.report.source import SourceBlock, source_block

INDEX = "index.html"
CSS = "report.css"

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="framescope {version}">
<title>{title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{css}">
</head>
<body>
<nav>{nav}</nav>
<main>
{body}
</main>
</body>
</html>
"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def page(title: str, nav: str, body: str) -> str:
    return PAGE.format(version=esc(__version__), title=esc(title), css=CSS, nav=nav, body=body)


def safe_name(text: str) -> str:
    """A file-name and id-safe spelling: letters, digits and ``_``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text) or "_"


def line_id(lineno: int, prefix: str = "") -> str:
    return "%sL-%d" % (prefix, lineno)


def code_block(text: str, start: int = 1, anchors: Optional[str] = None,
               marks: Optional[Dict[int, List[Tuple[str, str]]]] = None) -> str:
    """A ``<pre>`` with line numbers.

    ``anchors``: when given, each line gets the id ``<anchors>L-<n>``. ``marks`` maps line
    numbers to (kind, html note) pairs: the line gets the class ``mark-<kind>`` and the notes.
    """
    rows = []
    marks = marks or {}
    for number, line in enumerate(highlight_lines(text), start):
        notes = marks.get(number, [])
        classes = " ".join(["line"] + sorted(set("mark-" + kind for kind, _ in notes)))
        anchor = ' id="%s"' % line_id(number, anchors) if anchors is not None else ""
        note = "".join('<span class="note">%s</span>' % note for _, note in notes)
        rows.append('<span class="%s"%s><span class="ln">%d</span>%s%s</span>' % (
            classes, anchor, number, line, note))
    # Lines are blocks, so they are not separated by newlines (that would double them).
    return '<pre class="%s code">%s</pre>' % (CODE_CLASS, "".join(rows))


def definition_list(items: Iterable[Tuple[str, str]]) -> str:
    """``<dl>`` from (term, html) pairs; pairs whose html is empty are left out."""
    rows = "".join("<dt>%s</dt><dd>%s</dd>" % (esc(term), value) for term, value in items if value)
    return "<dl>%s</dl>" % rows if rows else ""


class Site:
    """The pages of one report and the links between them."""

    def __init__(self, dump: Dump, out: str) -> None:
        #: The dump the report shows.
        self.dump = dump
        #: The folder the pages are written to.
        self.out = os.path.abspath(out)
        #: Page file of each frame id and of each graph name.
        self.frame_pages = self._names("frame_", [frame.id for frame in dump.frames])
        self.graph_pages = self._names("graph_", [graph.name for graph in dump.graphs])
        #: The original source shown on each frame's page.
        self.blocks: Dict[str, Optional[SourceBlock]] = {
            frame.id: source_block(frame.filename, frame.firstlineno or frame.resume_line) for frame in dump.frames}
        #: (graph, stage) -> the nodes of that stage's listing, read once.
        self._nodes: Dict[Tuple[str, str], List[torch_text.ListedNode]] = {}

    @staticmethod
    def _names(prefix: str, keys: List[str]) -> Dict[str, str]:
        names: Dict[str, str] = {}
        taken = set()
        for key in keys:
            if key in names:
                continue
            stem = base = prefix + safe_name(key)
            count = 1
            while stem.lower() in taken:  # case-insensitive file systems
                count += 1
                stem = "%s_%d" % (base, count)
            taken.add(stem.lower())
            names[key] = stem + ".html"
        return names

    # ------------------------------------------------------------------ links

    def frame_link(self, frame_id: Optional[str], anchor: str = "", text: Optional[str] = None) -> str:
        frame = self.dump.frame(frame_id)
        label = esc(text if text is not None else frame.qualname if frame else frame_id)
        if frame_id not in self.frame_pages:
            return '<span class="absent" title="not in this dump">%s</span>' % label
        return '<a href="%s%s">%s</a>' % (self.frame_pages[frame_id], "#" + anchor if anchor else "", label)

    def entry_link(self, frame_id: Optional[str], index: Optional[int], text: Optional[str] = None) -> str:
        frame = self.dump.frame(frame_id)
        if frame is None or index is None or all(entry.index != index for entry in frame.entries):
            return '<span class="absent">%s</span>' % esc(text or "entry %s" % index)
        return self.frame_link(frame_id, "entry-%d" % index, text or "%s, entry %d" % (frame.qualname, index))

    def graph_link(self, name: str, anchor: str = "", text: Optional[str] = None) -> str:
        if name not in self.graph_pages:
            return '<span class="absent" title="not in this dump">%s</span>' % esc(text or name)
        return '<a href="%s%s">%s</a>' % (self.graph_pages[name], "#" + anchor if anchor else "", esc(text or name))

    def file_link(self, name: Optional[str]) -> str:
        """A link to a file of the dump itself, relative to the report (it stays beside the dump)."""
        path = self.dump.file(name)
        if path is None:
            return '<span class="absent" title="not in the dump folder">%s</span>' % esc(name or "(none)")
        href = os.path.relpath(path, self.out).replace(os.sep, "/")
        return '<a class="file" href="%s">%s</a>' % (quote(href), esc(name))

    def source_link(self, filename: Optional[str], lineno: Optional[int], prefer: Optional[str] = None) -> str:
        """``file:line``, linked to the frame page that shows that line (``prefer``'s first)."""
        label = esc(where(filename, lineno))
        frame_ids = ([prefer] if prefer in self.blocks else []) + list(self.blocks)
        for frame_id in frame_ids:
            block = self.blocks[frame_id]
            if block is not None and lineno in block and same_file(block.filename, filename):
                return self.frame_link(frame_id, line_id(lineno), where(filename, lineno))
        return '<span class="where">%s</span>' % label

    # ------------------------------------------------------------------ contents

    def dump_text(self, name: Optional[str]) -> Optional[str]:
        path = self.dump.file(name)
        if path is None:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def listed_nodes(self, graph: Graph, stage: str) -> List[torch_text.ListedNode]:
        """The FX nodes of one stage's listing of a graph ([] without that file)."""
        key = (graph.name, stage)
        if key not in self._nodes:
            self._nodes[key] = torch_text.listing_nodes(self.dump_text(graph.files.get(stage)) or "")
        return self._nodes[key]

    def dump_code(self, name: Optional[str], anchors: Optional[str] = None) -> str:
        """A dump file, highlighted, under a link to it; or a note that it is missing."""
        text = self.dump_text(name)
        if text is None:
            return '<p class="warning">%s is not in the dump folder.</p>' % esc(name or "The file")
        return '<p class="file">%s</p>%s' % (self.file_link(name), code_block(text, anchors=anchors))

    def frame_title(self, frame: Frame) -> str:
        return frame.qualname or frame.name or frame.id


def same_file(a: Optional[str], b: Optional[str]) -> bool:
    """Whether two paths name one file."""
    if not a or not b:
        return False
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))
