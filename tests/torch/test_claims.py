"""What README.md and docs/notebooks.md promise of ``%%framescope FOLDER`` and
``framescope.summary``, in a real IPython kernel (ipykernel, driven by nbclient)."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess, pytest.mark.needs_sockets]

FUNCTION = ("def halve(x):\n"
            "    y = torch.cos(x)\n"
            "    print(\"graph break here\")\n"
            "    return y / 2\n")

CELLS = [
    "import torch, framescope\n%load_ext framescope",
    # 1: a folder named on the magic's line.
    "%%framescope runs/first\n" + FUNCTION +
    "compiled = torch.compile(halve, backend=\"eager\")\n"
    "compiled(torch.ones(3))\n"
    "print(\"the cell ran\")",
    # 2: more than one word: an error, and the cell does not run.
    "%%framescope runs/second extra\n"
    "open(\"ran.txt\", \"w\").write(\"the cell ran\")",
    # 3, 4: the summary of a folder, and of the dump this process wrote last.
    "framescope.summary(\"runs/first\")",
    "framescope.summary()",
]


def outputs(cell, kind):
    return [out for out in cell.outputs if out.output_type == kind]


def stdout(cell):
    return "".join(out.text for out in outputs(cell, "stream") if out.name == "stdout")


def test_the_magic_with_a_folder_and_summary_of_a_folder_in_a_kernel(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    _setup, named, two_words, of_folder, of_last = notebook.cells
    assert not [out for cell in notebook.cells for out in outputs(cell, "error")]

    # %%framescope FOLDER: the dump goes into FOLDER (relative to the kernel's folder), not
    # framescope_dump/cell_<n>, and its summary is shown below the cell, linking its report.
    dump = tmp_path / "runs" / "first"
    index = json.loads((dump / "index.json").read_text(encoding="utf-8"))
    assert [frame["name"] for frame in index["frames"]][0] == "halve"
    assert (dump / "__transformed_code_0_for_halve.py").is_file()
    assert (dump / "report" / "index.html").is_file()
    assert not (tmp_path / "framescope_dump").exists()
    assert stdout(named) == "graph break here\nthe cell ran\n"
    (shown,) = outputs(named, "display_data")
    html = shown.data["text/html"]
    assert 'class="framescope-summary"' in html and "1 graph break" in html
    assert "dump folder <code>runs/first</code>" in html and 'href="runs/first/report/index.html"' in html
    assert "__transformed_code_0_for_halve.py" in html

    # More than one word: one line saying so, nothing run, nothing written.
    assert stdout(two_words) == "%%framescope: give at most one folder, not 2 words: runs/second extra\n"
    assert not outputs(two_words, "display_data") and not outputs(two_words, "execute_result")
    assert not (tmp_path / "ran.txt").exists() and not (tmp_path / "runs" / "second").exists()

    # framescope.summary(folder) as a cell's value: HTML in the notebook, text beside it.
    (result,) = outputs(of_folder, "execute_result")
    html = result.data["text/html"]
    assert html.startswith('<div class="framescope-summary">') and "1 graph break" in html
    assert "<h4>Graph breaks</h4>" in html and "graph break here" in html
    text = result.data["text/plain"].splitlines()
    assert text[0].startswith("framescope: 2 compiled frames, 2 cache entries, 0 recompiles, 1 graph break, ")
    assert text[1] == "dump: runs/first"
    assert text[2].startswith("  graph break at ") and "Failed to trace builtin operator" in text[2]

    # framescope.summary(): the dump this process wrote last, the one above.
    (last,) = outputs(of_last, "execute_result")
    assert last.data["text/plain"] == result.data["text/plain"]
