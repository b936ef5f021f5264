"""framescope in Jupyter: the example notebook run in a real IPython kernel (ipykernel + nbclient).

The notebook (examples/notebook.py builds it) compiles a function with a graph break and a
recompile under ``%%framescope``, runs that cell again, and keeps a dump open across cells
while a function is redefined; each output and file is checked here.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parent.parent.parent


def load_example():
    spec = importlib.util.spec_from_file_location("notebook_example", str(ROOT / "examples" / "notebook.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    folder = tmp_path_factory.mktemp("notebook")
    example = load_example()
    notebook = example.run(example.build(), str(folder))
    return folder, [cell for cell in notebook.cells if cell.cell_type == "code"]


def outputs(cell, kind):
    return [out for out in cell.outputs if out.output_type == kind]


def test_no_cell_fails(ran):
    _folder, cells = ran
    errors = [(cell.source, out.ename, out.evalue) for cell in cells for out in outputs(cell, "error")]
    assert errors == []


def test_the_magic_cell_shows_its_summary_as_html(ran):
    folder, cells = ran
    magic = cells[1]
    (shown,) = outputs(magic, "display_data")
    html = shown.data["text/html"]
    assert 'class="framescope-summary"' in html
    assert "1 recompile" in html and "1 graph break" in html
    assert "<h4>Recompiles</h4>" in html and "mode == &#x27;sin&#x27;" in html
    assert "<h4>Graph breaks</h4>" in html and "Failed to trace builtin operator" in html
    # Each entry's transformed code, highlighted or not, and a link to the report.
    assert "__transformed_code_0_for_scale.py" in html and '<pre class="hl">' in html
    assert 'href="framescope_dump/cell_' in html and "report/index.html" in html
    assert "report/frame_scale.html" in html  # each frame links to its page of the report
    # The same, briefly, as text.
    text = shown.data["text/plain"]
    assert "1 recompile" in text and "graph break at " in text


def test_the_cells_source_is_in_the_dump_and_the_report(ran):
    folder, cells = ran
    dump = folder / "framescope_dump" / ("cell_%d" % cells[1].execution_count)
    full_code = (dump / "full_code_for_scale.py").read_text(encoding="utf-8")
    assert "# a line of this cell" in full_code
    assert "# a line of this cell" in (dump / "report" / "frame_scale.html").read_text(encoding="utf-8")
    index = json.loads((dump / "index.json").read_text(encoding="utf-8"))
    assert index["frames"][0]["filename"].endswith(".py") and "ipykernel" in index["frames"][0]["filename"]
    assert index["graph_breaks"][0]["source_line"].strip() == 'print("graph break here")'


def test_running_the_cell_again_writes_new_files(ran):
    folder, cells = ran
    first, again = (folder / "framescope_dump" / ("cell_%d" % cells[i].execution_count) for i in (1, 2))
    assert first != again
    for dump in (first, again):
        assert (dump / "__transformed_code_0_for_scale.py").is_file()
    html = outputs(cells[2], "display_data")[0].data["text/html"]
    assert "1 recompile" in html


def test_a_dump_open_across_cells_names_a_redefined_function_apart(ran):
    folder, cells = ran
    # While the dump was still open, its index already listed both functions.
    (listed,) = outputs(cells[4], "execute_result")
    assert listed.data["text/plain"] == "['step', 'step_2']"
    session = folder / "framescope_dump" / "session"
    first = (session / "__transformed_code_0_for_step.py").read_text(encoding="utf-8")
    second = (session / "__transformed_code_0_for_step_2.py").read_text(encoding="utf-8")
    assert first != second and (session / "report" / "index.html").is_file()
    (shown,) = outputs(cells[5], "execute_result")
    assert "framescope-summary" in shown.data["text/html"] and "2 compiled frames" in shown.data["text/plain"]


def test_a_breakpoint_in_a_dumped_file_stops_while_a_cell_runs(tmp_path):
    # The kernel's own debugger (debugpy, as JupyterLab and VS Code use it) stops at a line
    # of the transformed code a dump wrote, when a later cell calls the compiled function.
    pytest.importorskip("debugpy")
    from tests.support.kernel_dap import Kernel

    kernel = Kernel(str(tmp_path))
    try:
        first = kernel.execute(
            "import torch, framescope\n"
            "session_dump = framescope.dump('dump')\n"
            "session_dump.__enter__()\n"
            "def f(x):\n    y = x + 1\n    return y * 2\n"
            "compiled = torch.compile(f, backend='eager')\n"
            "compiled(torch.ones(2))")
        assert first["status"] == "ok", first
        path = tmp_path / "dump" / "__transformed_code_0_for_f.py"
        lines = path.read_text(encoding="utf-8").splitlines()
        line = next(n for n, text in enumerate(lines, 1) if text.strip().startswith("graph_out_0 = "))
        kernel.attach()
        placed = kernel.request("setBreakpoints", {"source": {"path": str(path)}, "breakpoints": [{"line": line}]})
        assert placed["body"]["breakpoints"][0]["verified"], placed
        kernel.request("configurationDone")
        kernel.start("compiled(torch.ones(2))")
        stopped = kernel.wait_event("stopped")
        assert stopped["body"]["reason"] == "breakpoint"
        frames = kernel.request("stackTrace", {"threadId": stopped["body"]["threadId"]})["body"]["stackFrames"]
        assert (frames[0]["source"]["path"], frames[0]["line"]) == (str(path), line)
        scopes = kernel.request("scopes", {"frameId": frames[0]["id"]})["body"]["scopes"]
        names = kernel.request("variables", {"variablesReference": scopes[0]["variablesReference"]})["body"]
        assert "x" in [variable["name"] for variable in names["variables"]]
        kernel.request("continue", {"threadId": stopped["body"]["threadId"]})
    finally:
        kernel.close()


def test_an_exception_in_the_magic_cell_is_the_cells_error(tmp_path):
    # Run All (and nbconvert --execute, notebook CI) stops at the failing cell: nbclient raises,
    # the next cell never runs, and the traceback names the cell's own number and the raising
    # line of its source. The dump is still finished and shown.
    import re

    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for source in ("import torch\n%load_ext framescope",
                   "%%framescope\n"
                   "add_one = torch.compile(lambda x: x + 1, backend=\"eager\")\n"
                   "add_one(torch.ones(2))\n"
                   "raise ValueError(\"the cell fails here\")\n"
                   "print(\"after the error\")",
                   "open(\"marker.txt\", \"w\").write(\"the next cell ran\")"):
        notebook.cells.append(nbformat.v4.new_code_cell(source))
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(CellExecutionError) as raised:
        client.execute()
    assert (raised.value.ename, raised.value.evalue) == ("ValueError", "the cell fails here")
    _setup, magic, after = notebook.cells
    assert magic.execution_count == 2 and after.execution_count is None and not after.outputs
    assert not (tmp_path / "marker.txt").exists()
    (error,) = outputs(magic, "error")
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.traceback))
    assert "Cell In[2], line 3" in text and "Cell In[3]" not in text
    assert '----> 3 raise ValueError("the cell fails here")' in text
    assert not any("after the error" in out.text for out in outputs(magic, "stream"))
    # The dump was finished before the error: its summary is shown and its folder complete.
    (shown,) = outputs(magic, "display_data")
    assert "1 compiled frame" in shown.data["text/plain"]
    dump = tmp_path / "framescope_dump" / "cell_2"
    assert json.loads((dump / "index.json").read_text(encoding="utf-8"))["frames"]
    assert (dump / "report" / "index.html").is_file()
