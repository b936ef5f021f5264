"""Dump what torch.compile makes for a small program, then show which dumped lines ran.

    python examples/dump_basic.py [FOLDER]        # default: framescope_dump

``f`` is compiled three times (``n`` is a constant to Dynamo, and dynamic=False), and its
``print`` splits it into a graph, a call to print, and a resume function compiled on its own.
After the run the folder holds one ``__transformed_code_<i>_for_<fn>.py`` per cache entry,
one ``full_code_for_<fn>.py`` per compiled frame, and index.json / index.md. A trace
function shows that the compiled frames ran from the dumped files.
"""
import os
import sys

import torch

import framescope


def f(x, n):
    y = torch.sin(x) * n
    print("graph break: n =", n)
    return y + n


def main(folder):
    ran = {}

    def tracer(frame, event, arg):
        name = frame.f_code.co_filename
        if not name.startswith(os.path.abspath(folder) + os.sep):
            return None

        def lines(frame, event, arg):
            if event == "line":
                ran.setdefault(os.path.basename(name), set()).add(frame.f_lineno)
            return lines

        return lines

    compiled = torch.compile(f, backend="eager", dynamic=False)
    sys.settrace(tracer)
    with framescope.dump(folder):
        for n in (1, 2, 3):
            compiled(torch.ones(3), n)
    sys.settrace(None)

    print()
    print("files in %s:" % folder)
    for name in sorted(os.listdir(folder)):
        print("   ", name)
    print()
    print("dumped files whose lines ran:")
    for name, rows in sorted(ran.items()):
        print("    %s: lines %s" % (name, ", ".join(map(str, sorted(rows)))))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "framescope_dump")
