"""framescope diff on two copies of a dump: the same, then each kind of difference, then bad
input. Real processes of the command; the dumps are the report tests' fixture."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.environment import program_environment

pytestmark = pytest.mark.needs_subprocess

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dump_sample"


def framescope(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "framescope", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=program_environment(), timeout=120)


@pytest.fixture
def pair(tmp_path: Path):
    for name in ("a", "b"):
        shutil.copytree(str(FIXTURE), str(tmp_path / name))
    return tmp_path / "a", tmp_path / "b"


def edit(folder: Path, change) -> None:
    data = json.loads((folder / "index.json").read_text())
    change(data)
    (folder / "index.json").write_text(json.dumps(data))


def test_two_dumps_of_the_same_run_are_the_same(pair):
    a, b = pair
    # What differs between any two runs is no difference: the folder, addresses, ids.
    text = (b / "__transformed_code_0_for_f.py").read_text()
    (b / "__transformed_code_0_for_f.py").write_text(text + "# at 0x7f3a2b1c4d50 in %s\n" % b)
    (a / "__transformed_code_0_for_f.py").write_text(text + "# at 0x7f99aa0c4d10 in %s\n" % a)
    done = framescope("diff", str(a), str(b))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("no differences")
    record = json.loads(framescope("diff", str(a), str(b), "--json").stdout)
    assert record["same"] is True and record["changes"] == []


def test_each_kind_of_difference_is_named_with_a_diff(pair):
    a, b = pair
    path = b / "__transformed_code_1_for_f.py"
    path.write_text(path.read_text().replace("return", "return  # changed", 1))

    def change(data):
        frame = data["frames"][0]
        frame["entries"][0]["guard"].append("L['n'] == 7")
        frame["entries"].pop()  # its last entry is gone in B
        data["graph_breaks"] = data["graph_breaks"][:-1]
        data["graphs"][0]["caches"] = {"fx_graph": "hit"}
        data["failures"] = [{"compile_id": "9/0", "function": "whole", "kind": "Unsupported", "reason": "Data-dependent",
                             "filename": "/p/prog.py", "lineno": 5}]

    edit(b, change)
    done = framescope("diff", str(a), str(b))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert "  ~ f (prog.py:4): 4 cache entries -> 3 cache entries" in lines
    assert "  - f (prog.py:4) entry 3" in lines
    guard = lines.index("  ~ f (prog.py:4) entry 0")
    assert "      +L['n'] == 7" in lines[guard:]
    code = lines.index("transformed code:")
    assert lines[code + 1] == "  ~ f (prog.py:4) entry 1" and any("# changed" in line for line in lines[code:])
    assert any(line.startswith("  ~ f (prog.py:4) entry 0 graph 1: ") and "fx_graph - -> hit" in line
               for line in lines), lines
    assert any(line.startswith("  - prog.py:15 ") for line in lines[lines.index("graph breaks:"):])
    assert "  + whole at prog.py:5: Unsupported: Data-dependent" in lines
    assert lines[-1] == "1 added, 2 removed, 4 changed"
    record = json.loads(framescope("diff", str(a), str(b), "--json").stdout)
    kinds = {(change["kind"], change["change"]) for change in record["changes"]}
    assert {("frame", "changed"), ("entry", "removed"), ("guard", "changed"), ("code", "changed"),
            ("caches", "changed"), ("graph_break", "removed"), ("failure", "added")} <= kinds


def test_a_folder_that_is_no_dump_is_one_line_and_exit_2(pair, tmp_path):
    a, _b = pair
    done = framescope("diff", str(a), str(tmp_path / "missing"))
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("framescope: error: ")
