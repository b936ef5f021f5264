"""A dump keeps the code it decompiled beside torch's compile caches, and a warm run takes it
from there: the same files, nothing decompiled again, and a kept text that no longer checks
out is decompiled afresh. Real torch, a real cache folder per test."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from tests.support.environment import program_environment

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess]

# A graph break (two frames), and a recompile on an int: three entries.
PROGRAM = '''
import json, sys
import torch
import framescope

def f(x, n):
    y = torch.sin(x) * n
    print("sum", float(y.sum()))
    return torch.cos(y) + n

compiled = torch.compile(f, backend="eager")
with framescope.dump(sys.argv[1], caches=sys.argv[2] == "on"):
    for n in (1, 2, 3):
        out = compiled(torch.ones(4), n)
print("RESULT " + json.dumps({"out": out.tolist()}))
'''


def run(folder: Path, name: str, caches: str) -> Dict[str, str]:
    """Run the program into ``folder/name``; return its transformed-code files by name."""
    done = subprocess.run([sys.executable, str(folder / "prog.py"), str(folder / name), caches],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300,
                          cwd=str(folder), env=program_environment(TORCHINDUCTOR_CACHE_DIR=str(folder / "cache")))
    assert done.returncode == 0, done.stderr[-4000:]
    assert "RESULT " in done.stdout
    index = json.loads((folder / name / "index.json").read_text())
    entries = [entry for frame in index["frames"] for entry in frame["entries"]]
    assert entries and all(entry["decompiled"] for entry in entries), index["warnings"]
    return {entry["file"]: (folder / name / entry["file"]).read_text() for entry in entries}


def kept(folder: Path) -> List[Path]:
    return sorted((folder / "cache" / "framescope" / "sources").rglob("*.py"))


def test_a_warm_run_takes_the_decompiled_code_kept_by_the_first(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    first = run(tmp_path, "first", "on")
    texts = kept(tmp_path)
    assert len(texts) == len(first)
    # Mark one kept text (a comment changes no bytecode) and break another (a body that
    # computes something else): the warm run shows the first and decompiles the second again.
    marked, broken = texts[0], texts[1]
    lines = marked.read_text().splitlines()
    marked.write_text("\n".join(lines[:1] + ["    # kept from the first run"] + lines[1:]) + "\n")
    broken_text = broken.read_text()
    broken.write_text(broken_text.splitlines()[0] + "\n    return None\n")
    warm = run(tmp_path, "warm", "on")
    assert sorted(warm) == sorted(first)
    changed = [name for name in first if warm[name] != first[name]]
    assert len(changed) == 1 and "    # kept from the first run\n" in warm[changed[0]]
    # The broken text failed its check and was replaced by a fresh decompilation.
    assert broken.read_text() == broken_text
    assert kept(tmp_path) == texts


def test_with_the_caches_off_nothing_is_kept(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    run(tmp_path, "cold", "off")
    assert kept(tmp_path) == []
