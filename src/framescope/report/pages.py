"""The report's pages: the index, one page per compiled frame, one per graph."""
from __future__ import annotations

import os
import pkgutil
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

from framescope.report.highlight import style_css
from framescope.report.html import (CSS, INDEX, Site, code_block, definition_list, esc, page, same_file,
                                    safe_name)
from framescope.dump.index import cache_summary, entry_use, guard_size
from framescope.dump.records import Dump, Frame, Graph, GraphBreak, Kernel
from framescope.report.readable import skipped_frame, where
from framescope import torch_text
from framescope.torch_text import break_summary, failed_guards, resumed_name
from framescope.dump.naming import split_stage
from framescope.report.chart import phase_totals, phases_chart
from framescope.report.summary import (argument_changes, compile_time, counts, distinct_breaks, seconds,
                                       user_line)

STAGE_TITLES = {
    "dynamo": "Dynamo FX graph",
    "aot_joint": "AOT Autograd joint graph",
    "aot_forward": "AOT Autograd forward graph",
    "aot_backward": "AOT Autograd backward graph",
    "pre_grad": "Inductor pre-grad graph",
    "post_grad": "Inductor post-grad graph",
    "inductor": "Inductor output code (kernels)",
    "post_grad_backward": "Inductor post-grad graph, backward",
    "inductor_backward": "Inductor output code (kernels), backward",
    "split": "Split graph (calls the pieces)",
}


def stage_title(graph: Graph, stage: str) -> str:
    """A stage's heading; a piece's stage (``piece_2.inductor``) names the piece."""
    piece, base = split_stage(stage)
    title = STAGE_TITLES.get(base, base)
    if not piece:
        return title
    module = graph.piece_module(piece)
    return "%s%s: %s" % (piece.replace("_", " "), " (%s)" % module if module else "", title)


def write_report(dump: Dump, out: str) -> str:
    """Write the report of ``dump`` into folder ``out``; return the path of its index page."""
    os.makedirs(out, exist_ok=True)
    site = Site(dump, out)
    files = {INDEX: index_page(site), CSS: stylesheet()}
    for frame in dump.frames:
        files[site.frame_pages[frame.id]] = frame_page(site, frame)
    for graph in dump.graphs:
        files[site.graph_pages[graph.name]] = graph_page(site, graph)
    for name, text in files.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    return os.path.join(site.out, INDEX)


def write_ranks_index(out: str, ranks: List[Tuple[str, str]], divergences: Sequence[Any] = ()) -> str:
    """An index page for a distributed run: where the ranks compiled differently
    (report.ranks.Divergence), then a link to each rank's report, in ``out/<rank>/``.

    ``ranks`` holds (rank folder name, dump folder) pairs.
    """
    items = "".join('<li><a href="%s/%s">%s</a> <code>%s</code></li>' % (
        esc(quote(rank)), INDEX, esc(rank), esc(path)) for rank, path in ranks)
    found = "".join("<li>%s%s</li>" % (esc(d.text()), '<details><summary>diff</summary><pre class="reason">%s</pre>'
                                       '</details>' % esc("\n".join(d.change.diff)) if d.change.diff else "")
                    for d in divergences)
    diverge = ('<section id="divergences"><h2>Where the ranks diverge</h2><ol>%s</ol></section>' % found if found
               else "<p>The ranks compiled alike.</p>")
    body = "<h1>framescope report</h1>%s<h2>Ranks</h2><p>One dump per rank:</p><ul>%s</ul>" % (diverge, items)
    path = os.path.join(out, INDEX)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(page("framescope report", "", body))
    with open(os.path.join(out, CSS), "w", encoding="utf-8") as handle:
        handle.write(stylesheet())
    return os.path.abspath(path)


def stylesheet() -> str:
    data = pkgutil.get_data("framescope.report", "static/report.css")
    return (data.decode("utf-8") if data else "") + style_css()


def nav(site: Site, *trail: str) -> str:
    return " &rsaquo; ".join(['<a href="%s">framescope report</a>' % INDEX] + list(trail))


# --------------------------------------------------------------------------- index page


def index_page(site: Site) -> str:
    dump = site.dump
    breaks = distinct_breaks(dump.graph_breaks)
    meta = definition_list([
        ("program", "<code>%s</code>" % esc(" ".join(dump.argv)) if dump.argv else ""),
        ("torch", esc(dump.torch or "")),
        ("python", esc(dump.python or "")),
        ("dump folder", "<code>%s</code>" % esc(dump.path)),
    ])
    totals = counts(dump) + "."
    body = ["<h1>framescope report</h1>", meta, '<p class="totals">%s</p>' % esc(totals),
            findings_section(site), failures_section(site), frames_section(site), phases_section(site),
            recompiles_section(site),
            breaks_section(site, breaks), graphs_section(site)]
    if dump.warnings:
        body.append('<section id="warnings"><h2>Warnings</h2><ul>%s</ul></section>' % "".join(
            '<li class="warning">%s</li>' % esc(text) for text in dump.warnings))
    return page("framescope report", nav(site), "\n".join(body))


def frames_section(site: Site) -> str:
    rows = []
    for frame in site.dump.frames:
        graphs = sum(len(entry.graphs) for entry in frame.entries)
        resumes = ("resumes %s" % site.frame_link(frame.resume_of)) if frame.resume_of else ""
        rows.append("<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td></tr>" % (
            site.frame_link(frame.id), site.source_link(frame.filename, frame.firstlineno, frame.id),
            len(frame.entries), graphs, esc(seconds(compile_time(frame))), resumes))
    if not rows:
        return '<section id="frames"><h2>Compiled frames</h2><p>torch.compile compiled nothing.</p></section>'
    return ('<section id="frames"><h2>Compiled frames</h2><table><thead><tr><th>frame</th><th>source</th>'
            '<th>cache entries</th><th>graphs</th><th>compile time</th><th></th></tr></thead>'
            '<tbody>%s</tbody></table></section>' % "".join(rows))


def findings_section(site: Site) -> str:
    """What to change first, ranked (framescope explain's list)."""
    from framescope.report.findings import findings

    items = []
    for finding in findings(site.dump):
        place = esc(finding.place) + (" (library: %s)" % esc(finding.package) if finding.library else "")
        frames = finding.frames_text() if len(finding.frames) > 1 else ""
        items.append('<li><strong>%s</strong>%s<br>%s%s%s%s</li>' % (
            esc(finding.title), "" if finding.cost_s is None else " (%.2f s compiling)" % finding.cost_s,
            place, ' <code class="user-line">%s</code>' % esc(finding.line) if finding.line else "",
            "<br>in " + esc(frames) if frames else "",
            '<br><span class="suggestion">suggestion: %s</span>' % esc(finding.advice) if finding.advice else ""))
    if not items:
        return ""
    return '<section id="worth-fixing"><h2>Worth fixing first</h2><ol>%s</ol></section>' % "".join(items)


def phases_section(site: Site) -> str:
    """Compile time per frame, by phase, as a bar chart, with the compile caches' hits and misses."""
    rows = [(frame.qualname, phase_totals([entry.phases_s for entry in frame.entries])) for frame in site.dump.frames]
    chart = phases_chart(rows)
    if not chart:
        return ""
    caches = phase_totals([{k: float(v) for k, v in entry.caches.items()}
                           for frame in site.dump.frames for entry in frame.entries])
    note = ", ".join("%s %d" % (name.replace("_", " "), count) for name, count in sorted(caches.items()) if count)
    return ('<section id="compile-time"><h2>Compile time by phase</h2>%s%s</section>'
            % (chart, "<p>Compile caches: %s.</p>" % esc(note) if note else ""))


def recompiles_section(site: Site) -> str:
    items = []
    for recompile in site.dump.recompiles:
        guards = "".join("<li><code>%s</code>%s</li>" % (
            esc(guard.text), " <small>(guard of compile %s)</small>" % esc(guard.compile_id)
            if guard.compile_id else "") for guard in failed_guards(recompile.reason))
        text = user_line(recompile.filename, recompile.lineno, recompile.source_line)
        changes = "".join('<li class="argument">%s%s</li>' % (
            esc(change.text()), '<br><span class="suggestion">suggestion: %s</span>' % esc(change.advice)
            if change.advice else "") for change in argument_changes(site.dump, recompile))
        limit = ""
        if recompile.limit:
            limit = ('<p class="limit">torch.compile\'s <code>%s</code>%s was reached: from now on, calls that no '
                     'cache entry accepts run without torch.compile.</p>' % (
                         esc(recompile.limit.name),
                         " (%d)" % recompile.limit.value if recompile.limit.value else ""))
        items.append('<li>%s: failed guard<ul>%s</ul>%s%s%s%s</li>' % (
            site.entry_link(recompile.frame, recompile.entry) if recompile.entry is not None
            else site.frame_link(recompile.frame),
            guards or "<li><code>%s</code></li>" % esc(recompile.reason),
            site.source_link(recompile.filename, recompile.lineno, recompile.frame),
            ' <code class="user-line">%s</code>' % esc(text) if text else "",
            '<ul class="arguments">%s</ul>' % changes if changes else "", limit))
    if not items:
        return '<section id="recompiles"><h2>Recompiles</h2><p>None.</p></section>'
    return '<section id="recompiles"><h2>Recompiles</h2><ol>%s</ol></section>' % "".join(items)


def break_code(brk: GraphBreak) -> str:
    """torch's graph-break code, linked to its page, before the summary; "" without one."""
    if not brk.gb_code:
        return ""
    if brk.docs and brk.docs.startswith(("https://", "http://")):
        return '<a class="gb-code" href="%s"><code>%s</code></a> ' % (esc(brk.docs), esc(brk.gb_code))
    return '<code class="gb-code">%s</code> ' % esc(brk.gb_code)


def break_hints(brk: GraphBreak) -> str:
    if not brk.hints:
        return ""
    return '<ul class="hints">%s</ul>' % "".join("<li>hint: %s</li>" % esc(hint) for hint in brk.hints)


def break_frame(site: Site, brk: GraphBreak) -> str:
    """The function being compiled when it broke (named after its resume function when
    Dynamo skipped it, so that it has no page)."""
    if brk.frame is None and skipped_frame(brk):
        return esc(resumed_name(brk.resume) or "a function")
    return site.frame_link(brk.frame)


def break_continuation(site: Site, brk: GraphBreak) -> str:
    if site.dump.frame(brk.resume) is None and skipped_frame(brk):
        return "<br>Dynamo skipped the whole function: every call runs without torch.compile"
    return "<br>continues in %s" % site.frame_link(brk.resume) if brk.resume else ""


def failures_section(site: Site) -> str:
    """The compiles torch.compile gave up on (none: no section)."""
    items = []
    for failure in site.dump.failures:
        text = user_line(failure.filename, failure.lineno, failure.source_line)
        items.append('<li><code>%s</code> (compile %s) at %s: %s: %s%s%s<details><summary>torch\'s explanation'
                     '</summary><pre class="reason">%s</pre></details></li>' % (
                         esc(failure.function), esc(failure.compile_id or "?"),
                         site.source_link(failure.filename, failure.lineno, failure.frame), esc(failure.kind),
                         break_code(failure), esc(break_summary(failure.reason)),
                         ' <br><code class="user-line">%s</code>' % esc(text) if text else "", esc(failure.reason)))
    if not items:
        return ""
    return '<section id="failures"><h2>Failed compiles</h2><ol>%s</ol></section>' % "".join(items)


def breaks_section(site: Site, breaks) -> str:
    items = []
    for brk, count in breaks:
        text = user_line(brk.filename, brk.lineno, brk.source_line)
        items.append('<li>%s in %s%s: %s%s%s%s%s<details><summary>torch\'s explanation</summary>'
                     '<pre class="reason">%s</pre></details></li>' % (
                         site.source_link(brk.filename, brk.lineno, brk.frame), break_frame(site, brk),
                         " (in %d compiles)" % count if count > 1 else "", break_code(brk),
                         esc(break_summary(brk.reason)),
                         ' <br><code class="user-line">%s</code>' % esc(text) if text else "",
                         break_continuation(site, brk), break_hints(brk), esc(brk.reason)))
    if not items:
        return '<section id="graph-breaks"><h2>Graph breaks</h2><p>None.</p></section>'
    return '<section id="graph-breaks"><h2>Graph breaks</h2><ol>%s</ol></section>' % "".join(items)


def graphs_section(site: Site) -> str:
    rows = []
    for graph in site.dump.graphs:
        stages = ", ".join(site.graph_link(graph.name, "stage-" + safe_name(stage), stage) for stage in graph.files)
        rows.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            site.graph_link(graph.name), site.entry_link(graph.frame, graph.entry), esc(graph.backend or "-"),
            esc("-" if graph.nodes is None else graph.nodes), esc("-" if graph.ops is None else graph.ops),
            esc(", ".join(graph.inputs)), stages))
    if not rows:
        return '<section id="graphs"><h2>Graphs</h2><p>None.</p></section>'
    return ('<section id="graphs"><h2>Graphs</h2><table><thead><tr><th>graph</th><th>made by</th>'
            '<th>backend</th><th>nodes</th><th>ops</th><th>inputs</th><th>stages</th></tr></thead>'
            '<tbody>%s</tbody></table></section>' % "".join(rows))


# --------------------------------------------------------------------------- frame page


def frame_page(site: Site, frame: Frame) -> str:
    dump = site.dump
    breaks = distinct_breaks([brk for brk in dump.graph_breaks if brk.frame == frame.id])
    resumed_by = [other for other in dump.frames if other.resume_of == frame.id]
    meta = definition_list([
        ("code", esc(frame.name)),
        ("source", site.source_link(frame.filename, frame.firstlineno, frame.id)),
        ("resumes", "%s at line %s" % (site.frame_link(frame.resume_of), esc(frame.resume_line or "?"))
         if frame.resume_of else ""),
        ("resumed by", ", ".join(site.frame_link(other.id) for other in resumed_by)),
        ("cache entries", ", ".join(site.frame_link(frame.id, "entry-%d" % e.index, str(e.index))
                                    for e in frame.entries)),
        ("compile time", esc(seconds(compile_time(frame)))),
        ("full code", site.file_link(frame.full_code) if frame.full_code else ""),
    ])
    body = ["<h1>%s</h1>" % esc(site.frame_title(frame)), meta,
            '<div class="split"><section class="original"><h2>Original source</h2>%s</section>'
            '<div class="entries">%s</div></div>' % (
                original_source(site, frame, breaks), "".join(entry_section(site, frame, e) for e in frame.entries))]
    if breaks:
        items = "".join('<li id="break-%d">%s%s: %s%s%s%s<pre class="reason">%s</pre></li>' % (
            number, site.source_link(brk.filename, brk.lineno, frame.id),
            " (in %d compiles)" % count if count > 1 else "", break_code(brk), esc(break_summary(brk.reason)),
            "<br>continues in %s" % site.frame_link(brk.resume) if brk.resume else "", break_hints(brk),
            esc(brk.reason))
            for number, (brk, count) in enumerate(breaks))
        body.append('<section id="graph-breaks"><h2>Graph breaks</h2><ol>%s</ol></section>' % items)
    if frame.full_code:
        body.append('<section id="full-code"><details><summary>Full code: guards, compiled functions and '
                    'transformed code in one file</summary>%s</details></section>' % site.dump_code(frame.full_code))
    return page(site.frame_title(frame), nav(site, esc(site.frame_title(frame))), "\n".join(body))


def original_source(site: Site, frame: Frame, breaks: List[Tuple[GraphBreak, int]]) -> str:
    """The user's function, its graph breaks, recompile causes and resume point marked."""
    block = site.blocks.get(frame.id)
    if block is None:
        return '<p class="warning">The source file %s could not be read.</p>' % esc(
            where(frame.filename, frame.firstlineno))
    marks: Dict[int, List[Tuple[str, str]]] = {}
    for number, (brk, _) in enumerate(breaks):
        if brk.lineno in block:
            marks.setdefault(brk.lineno, []).append(("break", '<a href="#break-%d">graph break</a>' % number))
    recompiled: Dict[int, List[int]] = {}
    for recompile in site.dump.recompiles:
        if recompile.frame == frame.id and recompile.lineno in block and recompile.entry is not None:
            recompiled.setdefault(recompile.lineno, []).append(recompile.entry)
    for lineno, entries in recompiled.items():
        links = " ".join('<a href="#entry-%d">%d</a>' % (entry, entry) for entry in entries)
        marks.setdefault(lineno, []).append(("recompile", "recompiled for entr%s %s" % (
            "y" if len(entries) == 1 else "ies", links)))
    if frame.resume_line in block:
        marks.setdefault(frame.resume_line, []).append(("resume", "resumes here"))
    for lineno, links in nodes_by_line(site, block).items():
        marks.setdefault(lineno, []).append(("nodes", "FX nodes: " + "; ".join(links)))
    for lineno, links in kernels_by_line(site, block).items():
        marks.setdefault(lineno, []).append(("kernel", "kernels: " + ", ".join(links)))
    return '<p class="file">%s</p>%s' % (esc(block.filename), code_block(
        "\n".join(block.lines), start=block.start, anchors="", marks=marks))


#: Node links shown on one line of a frame page, per graph; the rest are counted.
SHOWN_NODES = 8


def nodes_by_line(site: Site, block) -> Dict[int, List[str]]:
    """Line of the block -> per graph, links to the FX nodes Dynamo made from that line (the
    ``# File:`` comments of the graph's listing say which)."""
    found: Dict[int, List[str]] = {}
    for graph in site.dump.graphs:
        per_line: Dict[int, List[torch_text.ListedNode]] = {}
        for node in site.listed_nodes(graph, "dynamo"):
            if node.place and node.place[1] in block and same_file(block.filename, node.place[0]):
                per_line.setdefault(node.place[1], []).append(node)
        for lineno, nodes in per_line.items():
            links = [site.graph_link(graph.name, "stage-dynamo-L-%d" % node.line, node.name)
                     for node in nodes[:SHOWN_NODES]]
            more = " and %d more" % (len(nodes) - SHOWN_NODES) if len(nodes) > SHOWN_NODES else ""
            found.setdefault(lineno, []).append("%s%s (%s)" % (", ".join(links), more, site.graph_link(graph.name)))
    return found


def kernels_by_line(site: Site, block) -> Dict[int, List[str]]:
    """Line of the block -> links to the Inductor kernels that compute its operations."""
    found: Dict[int, List[str]] = {}
    for graph in site.dump.graphs:
        for number, kernel in enumerate(graph.kernels):
            for filename, lineno in kernel.lines:
                if lineno in block and same_file(block.filename, filename):
                    found.setdefault(lineno, []).append(site.graph_link(
                        graph.name, "kernel-%d" % number, "%s (%s)" % (kernel.kernel, graph.name)))
    return found


def kernels_section(site: Site, graph: Graph) -> str:
    """Each kernel of the graph's Inductor code, where it is defined, and the user lines it computes."""
    if not graph.kernels:
        if not any(split_stage(stage)[1].startswith("inductor") for stage in graph.files):
            return ""
        if graph.caches:  # the caches were on: the dump left provenance tracking off
            why = ("The dump kept torch.compile's caches on, and Inductor's provenance tracking, which "
                   "changes their keys, is on only in a dump with the caches off (framescope run --cold, "
                   "framescope.dump(..., caches=False))")
        else:
            why = "torch %s gave no provenance for this graph's kernels (Inductor tracks it from torch 2.8 on)" % (
                site.dump.torch or "")
        return ('<section id="kernels"><h2>Kernels and the lines they compute</h2><p>%s.</p></section>'
                % esc(why))
    rows = []
    for number, kernel in enumerate(graph.kernels):
        line = kernel_definition(site.dump_text(graph.files.get(kernel.stage)), kernel.kernel)
        name = ('<a href="#stage-%s-L-%d"><code>%s</code></a>' % (safe_name(kernel.stage), line, esc(kernel.kernel))
                if line else "<code>%s</code>" % esc(kernel.kernel))
        lines = ", ".join(site.source_link(filename, lineno, graph.frame) for filename, lineno in kernel.lines)
        rows.append('<tr id="kernel-%d"><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>' % (
            number, name, esc(stage_title(graph, kernel.stage)), kernel_nodes(site, graph, kernel), lines or "—"))
    without = sum(1 for kernel in graph.kernels if not (kernel.pre_grad_nodes or kernel.post_grad_nodes))
    note = ('<p>torch %s gave no FX nodes for %d of these kernels (its node mappings leave out the '
            'backward\'s kernels, and torch before 2.8 has none).</p>' % (esc(site.dump.torch or ""), without)
            if without else "")
    return ('<section id="kernels"><h2>Kernels and the lines they compute</h2><table><thead><tr><th>kernel</th>'
            '<th>in</th><th>FX nodes (pre-grad &rarr; post-grad)</th><th>user lines</th></tr></thead>'
            '<tbody>%s</tbody></table>%s</section>' % ("".join(rows), note))


def kernel_nodes(site: Site, graph: Graph, kernel: Kernel) -> str:
    """The FX nodes a kernel computes, each linked to its line in the graph's listings."""
    if not (kernel.pre_grad_nodes or kernel.post_grad_nodes):
        return "—"
    piece, output = split_stage(kernel.stage)
    prefix = piece + "." if piece else ""
    pre = prefix + "pre_grad" if prefix + "pre_grad" in graph.files else prefix + "dynamo"
    post = prefix + ("post_grad_backward" if output == "inductor_backward" else "post_grad")
    return "%s &rarr; %s" % (node_links(site, graph, pre, kernel.pre_grad_nodes),
                             node_links(site, graph, post, kernel.post_grad_nodes))


def node_links(site: Site, graph: Graph, stage: str, names: List[str]) -> str:
    """Links to the named nodes' lines in one stage's listing, in the listing's order."""
    lines = {}
    for node in site.listed_nodes(graph, stage):
        lines.setdefault(node.name, node.line)
    ordered = sorted(names, key=lambda name: lines.get(name, len(lines) + 10 ** 9))  # listing order
    return ", ".join('<a href="#stage-%s-L-%d"><code>%s</code></a>' % (safe_name(stage), lines[name], esc(name))
                     if name in lines else "<code>%s</code>" % esc(name) for name in ordered) or "—"


def kernel_definition(text: Optional[str], name: str) -> Optional[int]:
    """The line of Inductor's output code where a kernel is defined, if it is defined there."""
    for number, line in enumerate((text or "").split("\n"), 1):
        if torch_text.kernel_defined(line) == name:
            return number
    return None


def entry_section(site: Site, frame: Frame, entry) -> str:
    parts = ['<h2>Cache entry %d</h2>' % entry.index]
    parts.append(definition_list([
        ("compile", esc(entry.compile_id or "")),
        ("compile time", esc(seconds(entry.compile_time_s)) if entry.compile_time_s is not None else ""),
        ("graphs", ", ".join(site.graph_link(name) for name in entry.graphs)),
        ("calls", ", ".join(site.frame_link(name) for name in entry.calls_resume)),
        ("guard", esc(guard_size(entry))),
        ("used", esc(entry_use(entry))),
    ]))
    if entry.recompile_reason:
        recompile = next((r for r in site.dump.recompiles if r.frame == frame.id and r.entry == entry.index), None)
        guards = "".join("<li><code>%s</code></li>" % esc(g.text) for g in failed_guards(entry.recompile_reason))
        parts.append('<div class="recompile"><p>Compiled again because the guard of earlier entries failed:</p>'
                     '<ul>%s</ul>%s</div>' % (
                         guards or "<li><code>%s</code></li>" % esc(entry.recompile_reason),
                         "<p>%s</p>" % site.source_link(recompile.filename, recompile.lineno, frame.id)
                         if recompile else ""))
    parts.append("<h3>Guard%s</h3>" % (" <code>%s</code>" % esc(entry.guard_function) if entry.guard_function else ""))
    parts.append(code_block("\n".join(entry.guard)) if entry.guard else "<p>No guard recorded.</p>")
    parts.append("<h3>Transformed code</h3>")
    if not entry.decompiled:
        parts.append('<p class="warning">Not decompiled; Dynamo\'s disassembly follows.%s</p>' % (
            " Reason: " + esc(entry.fallback_reason) if entry.fallback_reason else ""))
    parts.append(site.dump_code(entry.file))
    return '<section class="entry" id="entry-%d">%s</section>' % (entry.index, "".join(parts))


# --------------------------------------------------------------------------- graph page


def graph_page(site: Site, graph: Graph) -> str:
    meta = definition_list([
        ("made by", site.entry_link(graph.frame, graph.entry)),
        ("backend", esc(graph.backend or "")),
        ("FX nodes", esc("" if graph.nodes is None else graph.nodes)),
        ("operations", esc("" if graph.ops is None else graph.ops)),
        ("inputs", esc(", ".join(graph.inputs))),
        ("stages", ", ".join('<a href="#stage-%s">%s</a>' % (safe_name(stage), esc(stage)) for stage in graph.files)),
        ("kernels", kernel_links(site, graph)),
        ("compile caches", esc(cache_summary(graph))),
    ])
    body = ["<h1>%s</h1>" % esc(graph.name), meta, kernels_section(site, graph)]
    for stage, name in graph.files.items():
        prefix = "stage-%s-" % safe_name(stage)
        body.append('<section class="stage" id="stage-%s"><h2>%s</h2>%s</section>' % (
            safe_name(stage), esc(stage_title(graph, stage)), site.dump_code(name, anchors=prefix)))
    if not graph.files:
        body.append("<p>No files were dumped for this graph.</p>")
    return page(graph.name, nav(site, esc(graph.name)), "\n".join(body))


def kernel_links(site: Site, graph: Graph) -> str:
    """Links to the kernels defined in the graph's Inductor output code."""
    text = site.dump_text(graph.files.get("inductor"))
    if not text:
        return ""
    links = []
    for number, line in enumerate(text.split("\n"), 1):
        kernel = torch_text.kernel_defined(line)
        if kernel:
            links.append('<a href="#stage-inductor-L-%d"><code>%s</code></a>' % (number, esc(kernel)))
    return ", ".join(links)
