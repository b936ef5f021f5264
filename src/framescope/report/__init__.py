"""framescope.report: reading a dump folder, summing it up as text, showing it as HTML.

::

    from framescope.report import load_dump, format_summary, write_report

    dump = load_dump("framescope_dump")        # DumpError (one line) if it is no dump
    print(format_summary(dump))
    write_report(dump, "framescope_dump/report")  # index.html, a page per frame and graph

Nothing here imports torch: a dump can be read and reported on anywhere.
"""
from framescope.report.index import Dump, DumpError, load_dump
from framescope.report.pages import write_report
from framescope.report.summary import format_summary

__all__ = ["Dump", "DumpError", "format_summary", "load_dump", "write_report"]
