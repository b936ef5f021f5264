"""Builds examples/torch_compile_in_a_notebook.ipynb: framescope in Jupyter, outputs saved.

    python examples/notebook.py          # writes the notebook and runs it (needs ipykernel, nbclient)

The cells define and compile a function with a graph break and a recompile under
``%%framescope`` (the summary shows below the cell), run that cell again (new files, in a
folder of its own), and keep one dump open across cells while a function is redefined.
"""
from __future__ import annotations

import os
import sys
from typing import List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(HERE, "torch_compile_in_a_notebook.ipynb")

#: The cell that defines and compiles ``scale`` under ``%%framescope``; the notebook runs it twice.
SCALE_CELL = ("%%framescope\n"
              "def scale(x, mode):\n"
              "    y = torch.sin(x) if mode == \"sin\" else torch.cos(x)  # a line of this cell\n"
              "    print(\"graph break here\")\n"
              "    return y * 2\n\n"
              "compiled = torch.compile(scale, backend=\"eager\")\n"
              "compiled(torch.ones(4), \"sin\")\n"
              "compiled(torch.ones(4), \"cos\")  # another mode: a recompile")

#: (kind, source) of each cell.
CELLS: List[Tuple[str, str]] = [
    ("markdown", "# torch.compile, opened up in a notebook\n\n"
                 "`%load_ext framescope`, then `%%framescope` on a cell: it runs inside `framescope.dump`, "
                 "and what it compiled is shown below it."),
    ("code", "import torch\n%load_ext framescope"),
    ("code", SCALE_CELL),
    ("markdown", "Running that cell again defines `scale` anew and compiles it again: the files go "
                 "into a folder of their own, `cell_<n>` (the cell's execution count)."),
    ("code", SCALE_CELL),
    ("markdown", "A dump can also stay open across cells; its index is written after every compile, "
                 "and `save()` writes the HTML report at any time."),
    ("code", "import framescope\n"
             "session_dump = framescope.dump(\"framescope_dump/session\")\n"
             "session_dump.__enter__()\n"
             "def step(x):\n"
             "    return x + 1\n"
             "torch.compile(step, backend=\"eager\")(torch.ones(2))"),
    ("code", "def step(x):  # redefined: new files, not the old ones overwritten\n"
             "    return x * 3\n"
             "torch.compile(step, backend=\"eager\")(torch.ones(2))\n"
             "session_dump.save()\n"
             "from framescope.report import load_dump\n"
             "[frame.id for frame in load_dump(\"framescope_dump/session\").frames]"),
    ("code", "session_dump.__exit__(None, None, None)\n"
             "session_dump"),
]


def build():
    """The notebook, not yet run."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for kind, source in CELLS:
        maker = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        notebook.cells.append(maker(source))
    return notebook


def run(notebook, folder: str, timeout: int = 600):
    """Run every cell in a fresh kernel whose working folder is ``folder``; the notebook with
    its outputs."""
    from nbclient import NotebookClient

    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": folder}}).execute()
    return notebook


def main() -> int:
    import nbformat

    notebook = run(build(), HERE)
    nbformat.write(notebook, NOTEBOOK)
    print("wrote", NOTEBOOK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
