"""Compile time by phase, per frame, as a static SVG bar chart (no scripts, no styles needed)."""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from framescope.report.html import esc

#: The phases in the order they run, with their label and colour.
PHASES: Tuple[Tuple[str, str, str], ...] = (
    ("dynamo", "Dynamo (tracing)", "#4e79a7"),
    ("aot", "AOTAutograd", "#f28e2b"),
    ("inductor", "Inductor (lowering)", "#59a14f"),
    ("codegen", "code generation and kernel compiles", "#e15759"),
)

ROW, BAR, LABEL, WIDTH, LEGEND = 22, 14, 260, 460, 22


def phase_totals(phases: Sequence[Dict[str, float]]) -> Dict[str, float]:
    """Seconds per phase, summed over entries."""
    totals: Dict[str, float] = {}
    for entry in phases:
        for name, value in entry.items():
            totals[name] = totals.get(name, 0.0) + value
    return totals


def phases_chart(rows: List[Tuple[str, Dict[str, float]]]) -> str:
    """One stacked bar per (label, seconds by phase); "" when no row has a timed phase."""
    rows = [(label, phases) for label, phases in rows if sum(phases.values()) > 0]
    if not rows:
        return ""
    longest = max(sum(phases.values()) for _label, phases in rows)
    scale = WIDTH / longest
    height = ROW * len(rows) + LEGEND + 8
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="phases" width="%d" height="%d" role="img" '
             'aria-label="compile time by phase per frame">' % (LABEL + WIDTH + 80, height)]
    for number, (label, phases) in enumerate(rows):
        y = number * ROW
        parts.append('<text x="%d" y="%d" text-anchor="end" font-size="12">%s</text>'
                     % (LABEL - 6, y + BAR - 2, esc(label if len(label) <= 40 else label[:37] + "...")))
        x = float(LABEL)
        for name, title, colour in PHASES:
            seconds = phases.get(name, 0.0)
            if seconds <= 0:
                continue
            width = seconds * scale
            parts.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s %.2f s</title>'
                         '</rect>' % (x, y, max(width, 0.5), BAR, colour, esc(label), esc(title), seconds))
            x += width
        parts.append('<text x="%.1f" y="%d" font-size="11">%.2f s</text>' % (x + 4, y + BAR - 2,
                                                                           sum(phases.values())))
    x, y = 0, ROW * len(rows) + 6
    for _name, title, colour in PHASES:
        parts.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>' % (x, y, colour))
        parts.append('<text x="%d" y="%d" font-size="11">%s</text>' % (x + 14, y + 9, esc(title)))
        x += 14 + 7 * len(title) + 12
    parts.append("</svg>")
    return "".join(parts)
