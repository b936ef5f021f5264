"""Wrong code is never accepted: the round trip on tens of thousands of generated programs.

Programs come from hypothesmith (random syntax trees, ``from_node``, and random derivations
of Python's grammar, ``from_grammar``), drawn once into a corpus file (JSON lines) so that
every interpreter checks the same programs, and from the machine-code generator of
``tests/support/machine_programs.py`` (straight-line stack code in torch.compile's style,
checked by running it; see ``machine_fuzz.py``). Each function of a program (and the module
itself) is decompiled, recompiled and compared with the original's bytecode
(``tests/decompiler/roundtrip_check.py``): *equivalent*, *refused* (a one-line
DecompilationError) or *wrong* (anything else: different bytecode, a source that does not
recompile, another exception, more than ``--timeout`` seconds). A program is wrong when one
of its functions is; refused when one is refused and none wrong; *rejected* when the
interpreter itself refuses to compile it (generated for another version's grammar).

    python3 benchmarks/fuzz_roundtrip.py --programs 20000 --corpus .fuzz/corpus.jsonl --jobs 2
    python3 benchmarks/fuzz_roundtrip.py --programs 200 --versions 3.12 --machine 0

The corpus is drawn with this interpreter's hypothesmith (``pip install hypothesmith``) when
it holds fewer than ``--programs`` programs, in ``--jobs`` processes; the checks then run on
each of ``--versions`` (default CPython 3.8-3.13 and Pyodide's 3.14), in ``.venvs/<v>`` (``--venvs``) when
it exists (the machine-code generator needs the ``bytecode`` package), else in pyenv's
interpreter. The corpus must lie inside the repository for Pyodide to read it. The exit
status is 1 when anything was wrong or an interpreter gave no result.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import roundtrip_all  # noqa: E402  (finds interpreters, installs Pyodide)

CPYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13"]
PYODIDE = "3.14"
STRATEGIES = ("node", "grammar")
#: Programs drawn per hypothesis run; each run has its own seed, so a corpus grows in steps.
CHUNK = 100
COLUMNS = ("programs", "equivalent", "refused", "internal", "wrong", "rejected")


def load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


# --------------------------------------------------------------------------- drawing the corpus


def draw(strategy_name: str, seed: int, count: int) -> List[str]:
    """``count`` programs from one hypothesmith strategy, reproducibly from ``seed``."""
    import warnings

    import hypothesmith
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as with_seed

    strategy = hypothesmith.from_node() if strategy_name == "node" else hypothesmith.from_grammar()
    drawn: List[str] = []

    @with_seed(seed)
    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def keep(source: str) -> None:
        drawn.append(source)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        keep()
    return drawn


def read_corpus(path: Path) -> List[Dict[str, Any]]:
    if not path.exists():
        return []
    with path.open() as handle:
        return [json.loads(line) for line in handle if line.strip()]


def grow_corpus(path: Path, programs: int, jobs: int) -> int:
    """Draw chunks until ``path`` holds ``programs`` distinct programs; the number it holds.

    Hypothesis draws many small programs more than once; only the first copy is kept.
    """
    have = read_corpus(path)
    known = {item["source"] for item in have}
    next_seed = max((item["seed"] for item in have), default=-1) + 1
    path.parent.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        while len(known) < programs:
            # Half the chunks are new programs, about: draw twice what is missing, in parallel.
            batch = list(range(next_seed, next_seed + max(jobs, 2 * (programs - len(known)) // CHUNK + 1)))
            batch = batch[:max(jobs, 1) * 4]
            next_seed = batch[-1] + 1
            for lines in pool.map(draw_in_process, batch):
                fresh = [line for line in lines if json.loads(line)["source"] not in known]
                known.update(json.loads(line)["source"] for line in fresh)
                with path.open("a") as handle:
                    handle.writelines(fresh)
            print("%d distinct programs (%.0f s)" % (len(known), time.perf_counter() - began),
                  file=sys.stderr, flush=True)
    return len(known)


def draw_in_process(seed: int) -> List[str]:
    """One chunk, drawn in its own process (hypothesis is single-threaded): JSON lines."""
    strategy = STRATEGIES[seed % len(STRATEGIES)]
    done = subprocess.run([sys.executable, __file__, "--draw", strategy, str(seed)],
                          stdout=subprocess.PIPE, universal_newlines=True, check=True)
    return [json.dumps({"strategy": strategy, "seed": seed, "source": source}) + "\n"
            for source in json.loads(done.stdout)]


# --------------------------------------------------------------------------- checking, in a worker


class TimedOut(Exception):
    pass


def on_alarm(signum: int, frame: Any) -> None:
    raise TimedOut()


def check_program(check: Any, source: str, timeout: int) -> List[Any]:
    """The round trip of every function of ``source``, each bounded by ``timeout`` seconds."""
    if timeout and hasattr(signal, "alarm"):
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(timeout)
    try:
        return check.round_trip(source)
    except TimedOut:
        return [check.Outcome("<program>", "wrong", "took more than %d s" % timeout)]
    except RecursionError as err:  # deep generated nesting the checker itself cannot compile
        return [check.Outcome("<program>", "wrong", "RecursionError: %s" % err)]
    finally:
        if timeout and hasattr(signal, "alarm"):
            signal.alarm(0)


def check_corpus(corpus: List[Dict[str, Any]], timeout: int, show: int) -> Dict[str, Any]:
    check = load("roundtrip_check", REPO / "tests" / "decompiler" / "roundtrip_check.py")
    counts = {key: 0 for key in COLUMNS}
    functions = {key: 0 for key in check.OUTCOMES}
    refusals: Dict[str, int] = {}
    wrong: List[Dict[str, str]] = []
    for number, item in enumerate(corpus, 1):
        results = check_program(check, item["source"], timeout)
        counts["programs"] += 1
        counts[program_outcome(results)] += 1
        for result in results:
            functions[result.outcome] += 1
            if result.outcome == "refused":
                refusals[result.detail] = refusals.get(result.detail, 0) + 1
            elif result.outcome == "wrong" and len(wrong) < show:
                wrong.append({"seed": item["seed"], "function": result.name, "detail": result.detail,
                              "source": item["source"]})
        if number % 2000 == 0:
            print("checked %d of %d" % (number, len(corpus)), file=sys.stderr, flush=True)
    return {"counts": counts, "functions": functions, "refusals": refusals, "wrong": wrong}


def program_outcome(results: List[Any]) -> str:
    outcomes = {result.outcome for result in results}
    if not results:
        return "rejected"
    for outcome in ("wrong", "internal", "refused"):
        if outcome in outcomes:
            return outcome
    return "equivalent"


def check_machine(programs: int, show: int) -> Optional[Dict[str, Any]]:
    """The machine-code generator's outcomes, or None where ``bytecode`` is not installed."""
    try:
        import bytecode  # noqa: F401
    except ImportError:
        return None
    machine_fuzz = load("machine_fuzz", HERE / "machine_fuzz.py")
    return machine_fuzz.fuzz(0, programs, 24, show)


def worker(corpus_path: str, programs: int, machine: int, timeout: int, show: int, out: str) -> None:
    began = time.perf_counter()
    corpus = read_corpus(Path(corpus_path))[:programs]
    result = {"python": platform.python_version(), "hypothesmith": check_corpus(corpus, timeout, show)}
    result["hypothesmith"]["seconds"] = round(time.perf_counter() - began, 1)
    result["machine"] = check_machine(machine, show) if machine else None
    Path(out).write_text(json.dumps(result))


# --------------------------------------------------------------------------- running the interpreters


def interpreter(version: str, venvs: Path) -> Optional[List[str]]:
    """The command that runs a script on ``version``, or None when it is not installed."""
    if version == PYODIDE:
        if roundtrip_all.ensure_pyodide() is not None:
            return None
        return ["node", str(HERE / "pyodide_run.mjs")]
    venv = venvs / version / "bin" / "python"
    if venv.exists():
        return [str(venv)]
    python = roundtrip_all.find_cpython(version, roundtrip_all.pyenv_root())
    return [python] if python else None


def run_version(version: str, args: argparse.Namespace) -> Dict[str, Any]:
    command = interpreter(version, Path(args.venvs))
    if command is None:
        return {"version": version, "error": "not installed"}
    out = REPO / ".pyodide" / ("fuzz-%s.json" % version) if version == PYODIDE else \
        Path(args.corpus).resolve().parent / ("result-%s.json" % version)
    out.parent.mkdir(parents=True, exist_ok=True)
    script = os.path.relpath(__file__, REPO) if version == PYODIDE else __file__
    paths = [os.path.relpath(p, REPO) if version == PYODIDE else str(p)
             for p in (Path(args.corpus).resolve(), out)]
    command += [script, "--worker", paths[0], str(args.programs), str(args.machine), str(args.timeout),
                str(args.show), paths[1]]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + str(REPO))
    done = subprocess.run(command, cwd=str(REPO), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if done.returncode != 0 or not out.exists():
        tail = (done.stdout.strip().splitlines() or ["exit %d" % done.returncode])[-1]
        return {"version": version, "error": "exit %d: %s" % (done.returncode, tail)}
    result = json.loads(out.read_text())
    out.unlink()
    result["version"] = version
    return result


def table(results: List[Dict[str, Any]]) -> str:
    head = "%-8s %-12s" % ("python", "generator") + "".join(" %10s" % c for c in COLUMNS) + " %9s" % "seconds"
    lines = [head]
    for result in results:
        if "error" in result:
            lines.append("%-8s %s" % (result["version"], result["error"]))
            continue
        for name in ("hypothesmith", "machine"):
            part = result.get(name)
            if part is None:
                continue
            counts = dict(part["counts"])
            counts["programs"] = counts.get("programs", sum(counts.values()))
            counts["rejected"] = counts.get("rejected", counts.get("invalid", 0))
            lines.append("%-8s %-12s" % (result["python"], name) + "".join(" %10d" % counts.get(c, 0) for c in COLUMNS)
                         + " %9.0f" % part["seconds"])
    return "\n".join(lines)


def report(results: List[Dict[str, Any]], top: int) -> bool:
    """Print the refusal reasons and wrong programs; whether everything was right."""
    right = True
    for result in results:
        if "error" in result:
            right = False
            continue
        part = result["hypothesmith"]
        print("\n%s: functions %s" % (result["python"], part["functions"]))
        for reason, count in sorted(part["refusals"].items(), key=lambda item: -item[1])[:top]:
            print("  refused %d: %s" % (count, reason))
        for wrong in part["wrong"]:
            print("\n--- wrong: seed %s, %s: %s\n%s" % (wrong["seed"], wrong["function"], wrong["detail"],
                                                      wrong["source"]))
        machine = result.get("machine")
        right = right and not part["counts"]["wrong"] and not (machine and (machine["counts"]["wrong"]
                                                                            or machine["counts"]["invalid"]))
    return right


def main(argv: List[str]) -> int:
    if argv[:1] == ["--draw"]:
        print(json.dumps(draw(argv[1], int(argv[2]), CHUNK)))
        return 0
    if argv[:1] == ["--worker"]:
        worker(argv[1], int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5]), argv[6])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=2000,
                        help="distinct hypothesmith programs (default 2000)")
    parser.add_argument("--machine", type=int, default=5000, help="machine-code programs (default 5000)")
    parser.add_argument("--corpus", default=str(REPO / ".fuzz" / "corpus.jsonl"),
                        help="the programs, drawn once (default .fuzz/corpus.jsonl)")
    parser.add_argument("--versions", default=",".join(CPYTHONS + [PYODIDE]),
                        help="comma-separated versions (default 3.8-3.13 and 3.14 in Pyodide)")
    parser.add_argument("--venvs", default=str(REPO / ".venvs"),
                        help="folder of virtual environments named by version (default .venvs)")
    parser.add_argument("--jobs", type=int, default=2, help="processes at once (default 2)")
    parser.add_argument("--timeout", type=int, default=60, help="seconds allowed per program (default 60)")
    parser.add_argument("--show", type=int, default=3, help="wrong programs printed per version (default 3)")
    parser.add_argument("--top", type=int, default=5, help="refusal reasons printed per version (default 5)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    held = grow_corpus(Path(args.corpus), args.programs, args.jobs)
    print("corpus: %d distinct programs in %s, %.0f s" % (held, args.corpus, time.perf_counter() - began))
    versions = [v.strip() for v in args.versions.split(",") if v.strip()]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda version: run_version(version, args), versions))
    print(table(results))
    right = report(results, args.top)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
