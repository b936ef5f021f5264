"""``framescope explain`` on real torch.compile programs that call into a library: one finding
per cause, library code labelled and ranked after the program's own, no advice about names
Dynamo made, an nn.Module's int attribute named with torch's hint."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

pytest.importorskip("torch")

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess]

ROOT = Path(__file__).resolve().parents[2]

# A library, installed where packages are: a graph break in a function that several
# compiled functions of the program call.
LIBRARY = '''\
def noisy_scale(x):
    print("fakelib: scaling")  # a graph break in library code
    return x * 2
'''

PROGRAM = '''\
import torch

import fakelib

torch._dynamo.config.recompile_limit = 3


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.k = 1

    def forward(self, x):
        return x * self.k  # an int attribute of a Module: a recompile for each value


@torch.compile(backend="eager")
def f(x):
    return fakelib.noisy_scale(x) + 1


@torch.compile(backend="eager")
def g(x):
    return fakelib.noisy_scale(x) - 1


@torch.compile(backend="eager")
def h(x):
    y = x + 1
    print("h")  # a graph break in the program
    return y


@torch.compile(backend="eager")
def step(x):
    y = x * 2
    print("loss %.3f" % y.sum().item())  # the resume function after .item() guards the number
    return y


def main():
    x = torch.ones(4)
    f(x)
    g(x)
    h(x)
    module = Scale()
    scale = torch.compile(module, backend="eager")
    for k in range(1, 6):
        module.k = k
        scale(x)
    for i in range(3):
        step(x * i)


if __name__ == "__main__":
    main()
'''


def framescope(*args: str, cwd: Path, path: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=path + str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "framescope", *args], cwd=str(cwd), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)


@pytest.fixture(scope="module")
def explained(tmp_path_factory) -> Dict:
    """PROGRAM run by framescope run, with fakelib in a site-packages folder: the run's
    summary, and framescope explain's text and JSON."""
    folder = tmp_path_factory.mktemp("findings")
    package = folder / "env" / "site-packages" / "fakelib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(LIBRARY)
    (folder / "prog.py").write_text(PROGRAM)
    path = str(package.parent) + os.pathsep
    done = framescope("run", "--out", "dump", "--no-report", "prog.py", cwd=folder, path=path)
    assert done.returncode == 0, done.stderr[-3000:]
    text = framescope("explain", "dump", cwd=folder)
    record = framescope("explain", "dump", "--json", cwd=folder)
    assert text.returncode == record.returncode == 0, text.stderr + record.stderr
    return {"summary": done.stderr.splitlines(), "text": text.stdout.splitlines(),
            "findings": json.loads(record.stdout)["findings"]}


def line_of(text: str) -> int:
    """The line of PROGRAM that holds ``text``."""
    return next(number for number, line in enumerate(PROGRAM.splitlines(), 1) if text in line)


def by_title(findings: List[Dict], part: str) -> List[Dict]:
    return [finding for finding in findings if part in finding["title"] or part in (finding["advice"] or "")]


def test_one_finding_per_cause(explained):
    findings = explained["findings"]
    breaks = [(f["place"], f["title"]) for f in findings if f["kind"] == "graph_break"]
    assert len(breaks) == len(set(breaks)), breaks
    # No value is the subject of two recompile findings.
    subjects = [{c["subject"] for c in f["frames"]} for f in findings if f["kind"] != "graph_break"]
    assert sum(len(found) for found in subjects) == len(set().union(*subjects)), subjects
    for finding in findings:
        assert {"kind", "cost_s", "title", "place", "line", "advice", "frames", "count", "library"} <= set(finding)


def test_a_break_in_a_library_function_is_one_finding_for_every_frame(explained):
    findings = [f for f in explained["findings"] if f["place"].startswith("fakelib/__init__.py:")]
    assert len(findings) == 1, findings
    library = findings[0]
    assert library["place"] == "fakelib/__init__.py:2" and library["library"] is True
    assert library["package"] == "fakelib"
    names = [covered["name"] for covered in library["frames"]]
    assert {"f", "g"} <= set(names) and library["count"] == sum(c["count"] for c in library["frames"])
    assert library["title"].startswith("graph break in %d frames" % len(names))
    text = explained["text"]
    first = next(i for i, line in enumerate(text) if "fakelib/__init__.py:2 (library: fakelib)" in line)
    assert text[first + 1].startswith("     in f") and "; g" in text[first + 1]
    # The graph breaks section: the place once, each frame under it, torch's hints once.
    section = text[text.index("graph breaks:"):]
    heads = [line for line in section if line.startswith("  fakelib/__init__.py:2 ")]
    assert len(heads) == 1 and heads[0].startswith("  fakelib/__init__.py:2 in %d frames: " % len(names))
    start = section.index(heads[0])
    block = section[start + 1:]
    block = block[:next((i for i, line in enumerate(block) if not line.startswith("      ")), len(block))]
    hints = [line for line in block if line.startswith("      hint: ")]
    assert hints and len(hints) == len(set(hints))
    assert {"      in f", "      in g"} <= {line.split(":")[0] for line in block if line.startswith("      in ")}


def test_the_programs_findings_come_before_librarys(explained):
    findings = explained["findings"]
    flags = [f["library"] for f in findings]
    assert flags == sorted(flags) and False in flags and True in flags, flags
    assert all(f["place"].startswith("prog.py:") for f in findings if not f["library"])
    user_break = by_title(findings, "builtin operator `print`")
    assert any(f["place"] == "prog.py:%d" % line_of('print("h")') for f in user_break)


def test_no_advice_about_a_name_dynamo_made(explained):
    internal = [f for f in explained["findings"]
                if any((c["subject"] or "").startswith("___") for c in f["frames"])]
    assert internal, explained["text"]
    for finding in internal:
        assert finding["advice"] is None and finding["note"].startswith("no suggestion: ___stack")
    text = explained["text"]
    assert not any(line.startswith("     suggestion: ___") or line.startswith("      suggestion: ___")
                   for line in text)


def test_a_modules_int_attribute_is_named_with_torchs_hint(explained):
    findings = [f for f in explained["findings"] if any(c["subject"] == "self.k" for c in f["frames"])]
    assert len(findings) == 1, explained["text"]
    finding = findings[0]
    # The frame reached the recompile limit (3): the limit and its recompiles are one finding, first.
    assert finding["kind"] == "recompile_limit" and finding is explained["findings"][0]
    assert finding["title"].startswith("Scale.forward reached torch.compile's recompile_limit (3)")
    assert finding["count"] == 2 and finding["frames"][0]["limit"] is True
    assert finding["advice"].startswith("self.k is an int attribute of a Scale module")
    assert "allow_unspec_int_on_nn_module" in finding["advice"]
    assert finding["place"] == "prog.py:%d" % line_of("return x * self.k")
    # The summary counts recompiles without the compiles refused at the limit.
    totals = next(line for line in explained["summary"] if line.startswith("framescope: ") and " frame" in line)
    # Scale.forward's two and the resume function's one; not the compile refused at the limit.
    assert ", 3 recompiles, " in totals and "; 1 frame reached the recompile limit" in totals
    top = explained["summary"][explained["summary"].index("worth fixing first:") + 1:]
    assert top[0].startswith("  1. Scale.forward reached torch.compile's recompile_limit (3)")
    assert not any(line.startswith(("  2. Scale.forward", "  3. Scale.forward")) for line in top)


@pytest.mark.slow
def test_a_transformers_training_script(tmp_path):
    # examples/transformers_train.py: a tiny GPT-2 whose compiled step meets transformers'
    # logger.warning_once in four frames, a sequence length that changes in five frames,
    # and a warm-up module's int attribute up to the recompile limit.
    pytest.importorskip("transformers")
    shutil.copy(str(ROOT / "examples" / "transformers_train.py"), str(tmp_path / "transformers_train.py"))
    done = framescope("run", "--out", "dump", "--no-report", "transformers_train.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    explained = framescope("explain", "dump", "--json", cwd=tmp_path)
    findings = json.loads(explained.stdout)["findings"]
    places = [(f["kind"], f["place"], f["title"]) for f in findings]
    assert len(places) == len(set(places)), places
    logging = [f for f in findings if "logging.Logger" in f["title"] and f["kind"] == "graph_break"]
    assert len(logging) == 1 and logging[0]["library"] and logging[0]["package"] == "transformers"
    assert logging[0]["place"].startswith("transformers/modeling_utils.py:") and len(logging[0]["frames"]) > 1
    assert findings.index(logging[0]) > max(i for i, f in enumerate(findings) if not f["library"])
    lengths = [f for f in findings if f["advice"] and "torch._dynamo.mark_dynamic(input_ids, 1)" in f["advice"]]
    assert len(lengths) == 1 and not lengths[0]["library"] and len(lengths[0]["frames"]) > 1
    warmup = [f for f in findings if any(c["subject"] in ("warmup.k", "self.k") for c in f["frames"])]
    assert len(warmup) == 1 and warmup[0]["kind"] == "recompile_limit" and warmup[0] is findings[0]
    # The fullgraph helper that cannot compile: it failed in transformers' code (its logger),
    # so it ranks with the library's findings, at transformers' line.
    (failed,) = [f for f in findings if f["kind"] == "failed_compile"]
    assert failed["title"].startswith("perplexity failed to compile (Unsupported)") and failed["library"]
    assert failed["place"].startswith("transformers/modeling_utils.py:")
    assert "allow_unspec_int_on_nn_module" in warmup[0]["advice"]
    internal = [f for f in findings if any((c["subject"] or "").startswith("___") for c in f["frames"])]
    assert all(f["advice"] is None and f["note"].startswith("no suggestion: ") for f in internal)


# A fullgraph function that cannot be one graph (its error reaches the program), and a loop
# whose print Dynamo cannot handle inside it (it skips the whole function).
FAILING = '''\
import torch

@torch.compile(fullgraph=True, backend="eager")
def whole(x):
    if x.sum() > 0:
        return x + 1
    return x - 1

@torch.compile(backend="eager")
def loop(x):
    for i in range(3):
        x = x + 1
        print("step", i)
    return x

try:
    whole(torch.ones(3))
except Exception as exc:
    print("whole:", type(exc).__name__)
loop(torch.ones(2))
'''


def test_failed_compiles_are_reported_with_their_reason_and_line(tmp_path):
    (tmp_path / "prog.py").write_text(FAILING)
    done = framescope("run", "--out", "dump", "prog.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "whole: Unsupported" in done.stdout
    lines = FAILING.splitlines()
    branch, printing = lines.index("    if x.sum() > 0:") + 1, lines.index('        print("step", i)') + 1
    index = json.loads((tmp_path / "dump" / "index.json").read_text())
    failures = {f["function"]: f for f in index["failures"]}
    assert set(failures) == {"whole", "loop"}
    whole, loop = failures["whole"], failures["loop"]
    assert whole["kind"] == "Unsupported" and whole["lineno"] == branch and whole["filename"] == str(tmp_path / "prog.py")
    assert whole["reason"].startswith("Data-dependent branching") and whole["source_line"].strip() == "if x.sum() > 0:"
    assert loop["lineno"] == printing and "print" in loop["reason"] and loop["gb_code"]
    summary = done.stderr.splitlines()
    assert "2 compiles failed" in summary[next(i for i, line in enumerate(summary) if line.startswith("framescope: "))]
    section = summary[summary.index("failed compiles:") + 1:]
    assert section[0].startswith("  whole (compile %s) at prog.py:%d: Unsupported: " % (whole["compile_id"], branch))
    assert section[1] == "      if x.sum() > 0:"
    record = json.loads(framescope("explain", "dump", "--json", cwd=tmp_path).stdout)
    first = record["findings"][0]
    assert first["kind"] == "failed_compile" and first["place"] == "prog.py:%d" % branch
    assert first["title"].startswith("whole failed to compile (Unsupported): ")
    # The skipped loop: one finding with the break Dynamo could not handle inside it.
    (skipped,) = [f for f in record["findings"] if f["title"].startswith("loop runs without torch.compile")]
    assert loop["gb_code"] in skipped["title"] and "Failed to trace builtin operator" in skipped["title"]
    assert not any(f["kind"] == "failed_compile" and "loop" in f["title"] for f in record["findings"])
    assert [f["function"] for f in record["failures"]] == [f["function"] for f in index["failures"]]
    page = (tmp_path / "dump" / "report" / "index.html").read_text()
    assert '<section id="failures"><h2>Failed compiles</h2>' in page
    markdown = (tmp_path / "dump" / "index.md").read_text()
    assert "## Failed compiles" in markdown and "- `whole` (compile %s) failed at" % whole["compile_id"] in markdown
