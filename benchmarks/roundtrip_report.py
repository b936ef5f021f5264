"""Tables and lists of the round-trip benchmark, from the rows ``roundtrip.py --json`` writes.

Shared by ``roundtrip.py`` (one interpreter) and ``roundtrip_all.py`` (all of them).
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

#: The four outcomes of a function, in the order they are reported.
OUTCOMES = ("identical", "equivalent", "refused", "internal", "wrong")

HEADER = ("python", "corpus", "functions", "identical", "equivalent", "refused", "internal", "wrong", "unchecked",
          "time")
PACKAGE_HEADER = ("package", "files", "rejected", "in corpus", "functions", "identical", "equivalent", "refused",
                  "internal", "wrong")


def percent(count: int, total: int, counted: bool = False) -> str:
    shown = "%.1f%%" % (100.0 * count / (total or 1))
    return "%s (%d)" % (shown, count) if counted else shown


def format_row(data: dict, counted: bool = False) -> Tuple[str, ...]:
    total = data["functions"]
    return (
        (data["python"],
         data.get("corpus", "stdlib"),
         str(total))
        + tuple(percent(data.get(outcome, 0), total, counted) for outcome in OUTCOMES)
        + (percent(data["unchecked_compiles"] + data["identical"] + data["equivalent"], total),
           "%.1fs" % data["decompile_seconds"])
    )


def format_package_row(name: str, counts: Dict[str, int], counted: bool = False) -> Tuple[str, ...]:
    total = counts["functions"]
    return ((name, str(counts["files"]), str(counts["rejected_files"]), str(counts["population"]), str(total))
            + tuple(percent(counts.get(outcome, 0), total, counted) for outcome in OUTCOMES))


def format_table(rows: Sequence[Tuple[str, ...]], header: Tuple[str, ...] = HEADER) -> str:
    table = [header] + list(rows)
    widths = [max(len(line[column]) for line in table) for column in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) if column == 0 else cell.rjust(width)
                  for column, (cell, width) in enumerate(zip(line, widths)))
        for line in table
    )


def format_packages(data: dict) -> str:
    """One row per package of the wide corpus, then the total."""
    packages = data.get("packages") or {}
    rows = [format_package_row(name, counts) for name, counts in packages.items()]
    total = {key: sum(counts.get(key, 0) for counts in packages.values())
             for key in ("files", "rejected_files", "population", "functions") + OUTCOMES}
    rows.append(format_package_row("total", total))
    return format_table(rows, PACKAGE_HEADER)


#: (key in the row, title) of each ranked list.
LISTS = (
    ("differences", "first differences of equivalent but not identical functions"),
    ("refusals", "refusal reasons (DecompilationError)"),
    ("internal_errors", "internal errors (failures inside the decompiler, relabelled as DecompilationError)"),
    ("wrong_results", "wrong results"),
)


def format_ranking(entries: List[list], title: str, top: int) -> str:
    if not entries:
        return "%s: none" % title
    lines = ["%s (count, what, first example):" % title]
    for what, count, example in entries[:top]:
        lines.append("%6d  %s  [%s]" % (count, what, example))
    return "\n".join(lines)


def format_reasons(data: dict, top: int) -> str:
    """The most frequent first differences, refusal reasons and wrong results of a row."""
    return "\n".join(format_ranking(data.get(key) or [], title, top) for key, title in LISTS)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The table in Markdown, for docs/benchmarks.md."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(rows: List[dict], top: int) -> str:
    """The rows written by ``roundtrip.py --json`` as Markdown: totals, per package, rankings."""
    parts = [markdown_table(HEADER, [format_row(data, counted=True) for data in rows])]
    for data in rows:
        packages = data.get("packages")
        if packages:
            package_rows = [format_package_row(name, counts, counted=True) for name, counts in packages.items()]
            total = {key: sum(counts.get(key, 0) for counts in packages.values())
                     for key in ("files", "rejected_files", "population", "functions") + OUTCOMES}
            package_rows.append(format_package_row("total", total, counted=True))
            parts.append("%s, per package:\n\n%s" % (data["python"], markdown_table(PACKAGE_HEADER, package_rows)))
        for key, title in LISTS:
            entries = data.get(key) or []
            if entries:
                lines = ["%s, %s:" % (data["python"], title), ""]
                lines += ["- %d × `%s` (%s)" % (count, what, example) for what, count, example in entries[:top]]
                parts.append("\n".join(lines))
    return "\n\n".join(parts)


def across(rows: List[dict]) -> str:
    """One Markdown table of the wide corpus: a row per package, and per interpreter its share
    identical / refused (wrong, if any, after a second slash)."""
    wide = [data for data in rows if data.get("packages")]
    names = list(dict.fromkeys(name for data in wide for name in data["packages"]))
    header = ["package", "checked"] + [short_version(data["python"]) for data in wide]
    table = []
    for name in names + ["total"]:
        cells = []
        for data in wide:
            packages = data["packages"]
            counts = packages.get(name) if name != "total" else {
                key: sum(c.get(key, 0) for c in packages.values()) for key in ("functions",) + OUTCOMES}
            cells.append(share_cell(counts) if counts else "")
        checked = {(data["packages"].get(name) or {}).get("functions") for data in wide} if name != "total" \
            else {data["functions"] for data in wide}
        counts = sorted(n for n in checked if n is not None)
        table.append([name, "%d" % counts[0] if len(set(counts)) == 1 else "%d-%d" % (counts[0], counts[-1])] + cells)
    return markdown_table(header, table)


def short_version(python: str) -> str:
    """``3.11.7`` of ``3.11.7 (...)``, with a note for the WebAssembly build."""
    return python.split()[0] + (" (Pyodide)" if "yodide" in python else "")


def share_cell(counts: Dict[str, int]) -> str:
    total = counts["functions"] or 1
    cell = "%.1f%% / %.1f%%" % (100.0 * counts["identical"] / total, 100.0 * counts["refused"] / total)
    return cell + (" / %d wrong" % counts["wrong"] if counts["wrong"] else "")


def main(argv: List[str]) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(description="Print rows of roundtrip.py --json as Markdown.")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--across", action="store_true",
                        help="one table: a row per package, a column per interpreter (identical / refused)")
    args = parser.parse_args(argv)
    rows = []
    for path in args.files:
        with open(path) as handle:
            data = json.load(handle)
        rows += data if isinstance(data, list) else [data]
    print(across(rows) if args.across else markdown(rows, args.top))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
