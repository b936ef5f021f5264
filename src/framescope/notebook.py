"""framescope in Jupyter: a dump's summary shown under the cell, and the ``%%framescope`` magic.

::

    %load_ext framescope

    %%framescope
    model = torch.compile(model)
    model(x)

The cell runs inside ``framescope.dump`` (into ``framescope_dump/cell_<n>``, ``n`` the
cell's execution count, so that running a cell again writes new files), then the summary
of what it compiled is shown below it: frames and cache entries with their transformed
code, recompiles with the guard that failed, graph breaks with their line and torch's
hints, and links to the HTML report. An exception in the cell is the cell's error, as
without the magic (Run All stops there), once the dump is finished and its summary shown.
``framescope.summary(folder)`` shows any dump so;
a ``framescope.dump`` object shows its own. In a terminal the same objects print a few
lines of text.
"""
from __future__ import annotations

import os
from typing import Any, List, Optional, Tuple

from framescope.report.highlight import CODE_CLASS, highlight_lines, style_css
from framescope.report.html import esc

__all__ = ["Summary", "summary", "load_ipython_extension", "DEFAULT_FOLDER"]

#: Where ``%%framescope`` writes when no folder is named: one subfolder per cell run.
DEFAULT_FOLDER = "framescope_dump"

# The summary's own styles, scoped under its outer class so that a notebook's are untouched.
_CSS = """
.framescope-summary { font-family: sans-serif; font-size: 13px; line-height: 1.4; }
.framescope-summary table { border-collapse: collapse; margin: 4px 0 10px; }
.framescope-summary table th, .framescope-summary table td { text-align: left !important;
  padding: 2px 10px 2px 0; vertical-align: top; border-bottom: 1px solid #ddd; }
.framescope-summary h4 { margin: 10px 0 4px; }
.framescope-summary pre { margin: 4px 0; padding: 6px; background: #f7f7f7; overflow-x: auto; }
.framescope-summary .fallback { color: #a00; }
.framescope-summary .hint { color: #555; }
"""


class Summary:
    """What a dump folder holds: HTML in a notebook (``_repr_html_``), text elsewhere.

    The folder is read each time the summary is shown, so a summary of a dump still being
    written shows what is there by then. ``report`` (the default) writes the HTML report
    into ``<folder>/report`` when the summary is shown as HTML, for its links.
    """

    def __init__(self, path: "os.PathLike[str] | str", report: bool = True) -> None:
        #: The dump folder.
        self.path = os.fspath(path)
        #: Whether showing the summary as HTML writes the report it links to.
        self.report = report

    def load(self) -> Any:
        """The folder's Dump; DumpError (one line) when it is not a readable dump."""
        from framescope.report.index import load_dump

        return load_dump(self.path)

    def __repr__(self) -> str:
        from framescope.report.index import DumpError
        from framescope.report.summary import totals_line

        try:
            dump = self.load()
        except DumpError as err:
            return "framescope summary of %s: %s" % (self.path, err)
        lines = [totals_line(dump), "dump: %s" % _href(dump.path)]
        lines += ["  " + line for line in _findings(dump)[:5]]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from framescope.report.index import DumpError

        try:
            dump = self.load()
        except DumpError as err:
            return '<div class="framescope-summary"><p>framescope: %s</p></div>' % esc(err)
        report = write_report_of(dump) if self.report else None
        return render(dump, report)


def summary(path: "Optional[os.PathLike[str] | str]" = None, report: bool = True) -> Summary:
    """The summary of the dump in ``path`` (default: the one this process wrote last)."""
    if path is None:
        from framescope.dump import last_folder

        path = last_folder()
        if path is None:
            raise ValueError("framescope.summary: no dump was written in this process; name a folder")
    return Summary(path, report=report)


def write_report_of(dump: Any) -> Optional[str]:
    """Write the dump's HTML report into ``<folder>/report``; its index page, or None when the
    folder refuses it (the summary is still shown)."""
    from framescope.report.pages import write_report

    try:
        return write_report(dump, os.path.join(dump.path, "report"))
    except OSError:
        return None


# --------------------------------------------------------------------------- the HTML

def render(dump: Any, report: Optional[str]) -> str:
    """The summary of ``dump`` as one HTML fragment (``report``: its report's index page)."""
    from framescope.report.summary import totals_line

    parts = ['<div class="framescope-summary"><style>%s%s</style>' % (_CSS, style_css())]
    parts.append("<p><b>%s</b></p>" % esc(totals_line(dump)))
    links = ["dump folder <code>%s</code>" % esc(_href(dump.path))]
    if report:
        links.append('<a href="%s" target="_blank">HTML report</a>' % esc(_href(report)))
    parts.append("<p>%s</p>" % " · ".join(links))
    pages = _frame_pages(dump, report)
    parts += [_recompiles(dump), _breaks(dump), _frames(dump, pages)]
    if dump.warnings:
        parts.append("<h4>Warnings</h4><ul>%s</ul>" % "".join("<li>%s</li>" % esc(w) for w in dump.warnings))
    parts.append("</div>")
    return "".join(part for part in parts if part)


def _href(path: str) -> str:
    """A link a notebook opens: relative to the kernel's folder when inside it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


def _frame_pages(dump: Any, report: Optional[str]) -> dict:
    """Frame id -> link to its page of the report (none without a report)."""
    if not report:
        return {}
    from framescope.report.html import Site

    site = Site(dump, os.path.dirname(report))
    return {frame_id: _href(os.path.join(os.path.dirname(report), page))
            for frame_id, page in site.frame_pages.items()}


def _frames(dump: Any, pages: dict) -> str:
    from framescope.dump.index import cache_summary, entry_use

    if not dump.frames:
        return "<p>No frame was compiled.</p>"
    rows = []
    for frame in dump.frames:
        name = "<code>%s</code>" % esc(frame.qualname)
        if frame.id in pages:
            name = '<a href="%s" target="_blank">%s</a>' % (esc(pages[frame.id]), name)
        for entry in frame.entries:
            how = ("decompiled" if entry.decompiled
                   else '<span class="fallback">Dynamo\'s code: %s</span>' % esc(entry.fallback_reason))
            rows.append("<tr><td>%s</td><td>%d</td><td>%s</td><td><code>%s</code></td><td>%s</td><td>%s</td></tr>" % (
                name, entry.index, esc(entry.compile_id or ""), esc(entry.file or ""), how, esc(entry_use(entry))))
    table = ("<h4>Frames and cache entries</h4><table><tr><th>frame</th><th>entry</th><th>compile</th>"
             "<th>file</th><th></th><th>use</th></tr>%s</table>" % "".join(rows))
    cached = [(graph.name, cache_summary(graph)) for graph in dump.graphs if graph.caches]
    if cached:
        table += "<h4>Compile caches</h4><ul>%s</ul>" % "".join(
            "<li><code>%s</code>: %s</li>" % (esc(name), esc(text)) for name, text in cached)
    return table + "".join(_transformed(dump, frame, entry) for frame in dump.frames for entry in frame.entries)


def _transformed(dump: Any, frame: Any, entry: Any) -> str:
    """The entry's transformed code, highlighted, folded under its name."""
    path = dump.file(entry.file)
    if path is None:
        return ""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return ""
    code = "\n".join(highlight_lines(text))
    return ('<details><summary><code>%s</code>: cache entry %d of <code>%s</code></summary>'
            '<pre class="%s">%s</pre></details>' % (esc(entry.file), entry.index, esc(frame.qualname), CODE_CLASS, code))


def _recompiles(dump: Any) -> str:
    from framescope.report.readable import guard_summary, where

    if not dump.recompiles:
        return ""
    rows = []
    for recompile in dump.recompiles:
        frame = dump.frame(recompile.frame)
        name = frame.qualname if frame else recompile.frame or "?"
        limit = (" (torch's %s was reached: this call runs without torch.compile)" % recompile.limit.name
                 if recompile.limit else "")
        rows.append("<tr><td><code>%s</code></td><td>%s</td><td><code>%s</code>%s</td><td>%s</td></tr>" % (
            esc(name), "" if recompile.entry is None else recompile.entry, esc(guard_summary(recompile.reason)),
            esc(limit), esc(where(recompile.filename, recompile.lineno))))
    return ("<h4>Recompiles</h4><table><tr><th>frame</th><th>new entry</th><th>failed guard</th><th>line</th></tr>"
            "%s</table>" % "".join(rows))


def _breaks(dump: Any) -> str:
    from framescope.report.readable import where
    from framescope.report.summary import distinct_breaks
    from framescope.torch_text import break_summary

    breaks = distinct_breaks(dump.graph_breaks)
    if not breaks:
        return ""
    rows = []
    for brk, count in breaks:
        hints = "".join('<div class="hint">hint: %s</div>' % esc(hint) for hint in brk.hints)
        code = "[%s] " % brk.gb_code if brk.gb_code else ""
        line = '<div><code>%s</code></div>' % esc(brk.source_line.strip()) if brk.source_line else ""
        rows.append("<tr><td>%s</td><td>%s%s%s%s</td></tr>" % (
            esc(where(brk.filename, brk.lineno)), esc(code), esc(break_summary(brk.reason)),
            " (%d compiles)" % count if count > 1 else "", line + hints))
    return "<h4>Graph breaks</h4><table><tr><th>line</th><th>reason</th></tr>%s</table>" % "".join(rows)


def _findings(dump: Any) -> List[str]:
    """One line per recompile and graph break, for the text summary."""
    from framescope.report.readable import guard_summary, where
    from framescope.report.summary import distinct_breaks
    from framescope.torch_text import break_summary

    lines = []
    for recompile in dump.recompiles:
        frame = dump.frame(recompile.frame)
        lines.append("recompile of %s at %s: %s" % (frame.qualname if frame else recompile.frame,
                                                    where(recompile.filename, recompile.lineno),
                                                    guard_summary(recompile.reason)))
    for brk, _count in distinct_breaks(dump.graph_breaks):
        lines.append("graph break at %s: %s" % (where(brk.filename, brk.lineno), break_summary(brk.reason)))
    return lines


# --------------------------------------------------------------------------- the IPython extension

def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext framescope``: register the ``%%framescope`` cell magic."""
    ipython.register_magic_function(_cell_magic(ipython), magic_kind="cell", magic_name="framescope")


def _cell_magic(ipython: Any) -> Any:
    def framescope(line: str, cell: str) -> None:
        """%%framescope [FOLDER]: run the cell inside framescope.dump and show what it compiled.

        FOLDER defaults to framescope_dump/cell_<n>, n the cell's execution count. An
        exception in the cell is the cell's error (after the dump is finished and shown)."""
        __tracebackhide__ = True  # IPython leaves this frame out of the cell's traceback
        number = _cell_number(ipython)
        folder, error = _folder(line, number)
        if error:
            print("%%framescope: " + error)
            return
        codes = _compile_cell(ipython, cell, number)
        import framescope.dump

        from IPython.display import display

        block = framescope.dump(folder)
        started = False
        try:
            with block:
                started = True
                for code in codes:
                    exec(code, ipython.user_global_ns, ipython.user_ns)
        finally:
            if started:
                display(block)

    return framescope


def _compile_cell(ipython: Any, cell: str, number: Optional[int]) -> List[Any]:
    """The cell's code as IPython compiles a cell: magics and ``!`` lines transformed, the
    shell's AST transformers applied, its source cached under the cell's own number (so that
    a traceback reads ``Cell In[n]`` and shows the cell's lines), and the value of a last
    expression shown as the cell's result. Top-level ``await`` is a SyntaxError here."""
    import ast

    transformed = ipython.transform_cell(cell)
    name = ipython.compile.cache(transformed, number if number is not None else 0, raw_code=cell)
    tree = ipython.transform_ast(ipython.compile.ast_parse(transformed, filename=name))
    run, shown = _split(tree.body, ipython.ast_node_interactivity)
    codes = [ipython.compile(ast.Module(run, []), name, "exec")] if run else []
    if shown:
        codes.append(ipython.compile(ast.Interactive(shown), name, "single"))
    return codes


def _split(nodes: List[Any], interactivity: str) -> Tuple[List[Any], List[Any]]:
    """The statements to run as they are and those whose values are shown, after IPython's
    ``ast_node_interactivity`` (``last_expr`` by default: a last expression's value)."""
    import ast

    if not nodes or interactivity == "none":
        return nodes, []
    if interactivity == "all":
        return [], nodes
    last = nodes[-1]
    if interactivity == "last_expr_or_assign" and isinstance(last, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = last.targets if isinstance(last, ast.Assign) else [last.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            value = ast.copy_location(ast.Expr(ast.Name(targets[0].id, ast.Load())), last)
            return nodes, [ast.fix_missing_locations(value)]
    if interactivity == "last" or isinstance(last, ast.Expr):
        return nodes[:-1], [last]
    return nodes, []


def _cell_number(ipython: Any) -> Optional[int]:
    """The execution count of the cell running now (``In [n]``). IPython counts the next cell
    in ``execution_count`` while one runs (9.16 on), this cell before: its running result
    holds the count either way."""
    running = getattr(getattr(ipython, "displayhook", None), "exec_result", None)
    count = getattr(running, "execution_count", None)
    return count if isinstance(count, int) else getattr(ipython, "execution_count", None)


def _folder(line: str, count: Optional[int]) -> Tuple[str, Optional[str]]:
    """The folder ``%%framescope`` writes into, or an error for more than one argument."""
    words = line.split()
    if len(words) > 1:
        return "", "give at most one folder, not %d words: %s" % (len(words), line.strip())
    if words:
        return words[0], None
    return os.path.join(DEFAULT_FOLDER, "cell_%s" % (count if count is not None else 0)), None
