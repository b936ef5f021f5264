#!/usr/bin/env python3
"""Run framescope's test suite on every interpreter it supports.

    python3 scripts/test.py                      # CPython 3.8-3.13 and Pyodide (CPython 3.14)
    python3 scripts/test.py --python 3.12        # one interpreter; repeat the option for more
    python3 scripts/test.py --python pyodide     # the same as --pyodide-only
    python3 scripts/test.py --pyodide-only
    python3 scripts/test.py -- -k loops -x       # everything after -- goes to pytest

Each CPython gets a virtual environment in .venvs/<major.minor> with framescope installed
editable with its `test` extra; the interpreters in TORCH also get that torch release and the
`test-torch` extra, and their torch tests may not skip.
Pyodide runs from .pyodide/, installed from scripts/pyodide/package*.json, with the
pure-Python wheels pinned in scripts/pyodide/requirements.txt. Both are reused while their
inputs are unchanged. At most --jobs sessions run at once; each one's output is printed as a
section when it ends, then a summary table. The exit status is non-zero when an interpreter
is missing, a session cannot be set up, or pytest does not pass (no tests collected
included). Only the standard library is used, so any python3 >= 3.8 can run this file.
"""
from __future__ import annotations

import argparse
import codecs
import concurrent.futures
import dataclasses
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Set, Tuple

REPO = Path(__file__).resolve().parent.parent
VENVS = REPO / ".venvs"
PYODIDE_HOME = REPO / ".pyodide"
PYODIDE_SPEC = REPO / "scripts" / "pyodide"

# The CPython releases framescope is tested on, by major.minor.
CPYTHONS = {
    "3.8": "3.8.18",
    "3.9": "3.9.18",
    "3.10": "3.10.13",
    "3.11": "3.11.7",
    "3.12": "3.12.1",
    "3.13": "3.13.0",
}
# Pyodide 314.0.7 ships CPython 3.14.2 built for WebAssembly.
PYODIDE = "3.14"
PYODIDE_NAMES = ("3.14", "pyodide")
# The interpreters the torch tests run on, each with exactly this torch: 3.11 with 2.13.0,
# 3.13 with the newest release (PyPI's Linux wheels are CUDA builds that run on the CPU).
# benchmarks/torch_matrix.py runs the torch tests on every supported pair.
TORCH = {"3.11": "torch==2.13.0", "3.13": "torch==2.15.0"}

# Longest sessions first, so the two job slots end at about the same time.
ORDER = ["3.11", "3.13", PYODIDE, "3.8", "3.9", "3.10", "3.12"]

SETUP_TIMEOUT = 20 * 60


class SetupError(Exception):
    """A session could not be prepared; the message is one line."""


@dataclasses.dataclass
class Session:
    """One interpreter's test session and what became of it."""

    #: "3.8" ... "3.13", or "3.14" for Pyodide.
    name: str
    #: Shown in section headers and the summary, e.g. "CPython 3.12.1".
    label: str
    #: "ok", "FAILED", "no tests", "timeout", "setup failed" or "missing".
    status: str = "pending"
    #: pytest's counts by outcome ("passed", "failed", "skipped", "xfailed", "error", ...).
    counts: Dict[str, int] = dataclasses.field(default_factory=dict)
    #: Seconds spent creating or checking the environment.
    setup_s: float = 0.0
    #: Seconds pytest ran.
    test_s: float = 0.0
    #: Everything the session printed.
    output: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Runner:
    """Runs one session's commands, collecting their output (and echoing it when streaming)."""

    #: Every running child, so that Ctrl-C can end them all.
    live: Set[subprocess.Popen] = set()
    live_lock = threading.Lock()
    #: Set on Ctrl-C: no new command starts.
    stopping = threading.Event()

    def __init__(self, stream: bool) -> None:
        #: Echo output to this terminal as it comes, besides collecting it.
        self.stream = stream
        #: Everything the session printed so far.
        self.chunks: List[str] = []

    @property
    def output(self) -> str:
        return "".join(self.chunks)

    def write(self, text: str) -> None:
        self.chunks.append(text)
        if self.stream:
            sys.stdout.write(text)
            sys.stdout.flush()

    def say(self, text: str) -> None:
        self.write(text + "\n")

    def run(
        self,
        cmd: Sequence[str],
        *,
        cwd: Path = REPO,
        env: Optional[Dict[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> Tuple[int, str]:
        """Run cmd; return its exit status (-1 when killed at timeout) and its output."""
        self.say("$ " + " ".join(_quote(c) for c in cmd))
        # Under the lock, so that Ctrl-C either sees this child or stops it from starting.
        with Runner.live_lock:
            if Runner.stopping.is_set():
                raise SetupError("interrupted")
            try:
                proc = subprocess.Popen(
                    list(cmd),
                    cwd=str(cwd),
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    # Its own process group, so a timeout or Ctrl-C ends its children too.
                    start_new_session=True,
                )
            except OSError as exc:
                raise SetupError("cannot run %s: %s" % (cmd[0], exc.strerror or exc))
            Runner.live.add(proc)
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            _kill(proc)

        timer = threading.Timer(timeout, expire) if timeout else None
        if timer:
            timer.start()
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        start = len(self.chunks)
        try:
            fd = proc.stdout.fileno()
            while True:
                # Whatever is there, as soon as it is there: pytest's progress dots end no line.
                data = os.read(fd, 65536)
                if not data:
                    break
                self.write(decoder.decode(data))
            self.write(decoder.decode(b"", final=True))
            rc = proc.wait()
        finally:
            if timer:
                timer.cancel()
            proc.stdout.close()
            with Runner.live_lock:
                Runner.live.discard(proc)
        text = "".join(self.chunks[start:])
        if expired.is_set():
            self.say("!! killed after %d s" % timeout)
            return -1, text
        return rc, text

    def check(self, cmd: Sequence[str], what: str, **kwargs) -> None:
        kwargs.setdefault("timeout", SETUP_TIMEOUT)
        rc, _ = self.run(cmd, **kwargs)
        if rc != 0:
            raise SetupError("%s failed (exit status %d)" % (what, rc))


def _quote(arg: str) -> str:
    return arg if re.match(r"^[\w@%+=:,./\[\]-]+$", arg) else "'" + arg.replace("'", "'\\''") + "'"


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.read_bytes())
    return h.hexdigest()


def _stamp_matches(stamp: Path, wanted: Dict[str, str]) -> bool:
    try:
        return json.loads(stamp.read_text()) == wanted
    except (OSError, ValueError):
        return False


# --------------------------------------------------------------------------- CPython


def pyenv_root() -> Path:
    if os.environ.get("PYENV_ROOT"):
        return Path(os.environ["PYENV_ROOT"])
    pyenv = shutil.which("pyenv")
    if pyenv:
        try:
            found = subprocess.run(
                [pyenv, "root"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30
            ).stdout.decode().strip()
        except (OSError, subprocess.SubprocessError):
            found = ""
        if found:
            return Path(found)
    return Path.home() / ".pyenv"


def find_cpython(minor: str) -> Optional[Path]:
    """The pinned release of this minor version under pyenv, else its newest patch release."""
    versions = pyenv_root() / "versions"
    pinned = versions / CPYTHONS[minor] / "bin" / "python"
    if pinned.exists():
        return pinned
    patch = re.compile(re.escape(minor) + r"\.(\d+)$")
    others = sorted(
        (int(m.group(1)), p)
        for p in (versions.iterdir() if versions.is_dir() else [])
        for m in [patch.match(p.name)]
        if m and (p / "bin" / "python").exists()
    )
    return others[-1][1] / "bin" / "python" if others else None


def cpython_version(python: Path) -> str:
    out = subprocess.run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=60,
    )
    if out.returncode != 0:
        raise SetupError("%s does not start: %s" % (python, out.stdout.decode().strip()[-200:]))
    return out.stdout.decode().strip()


def setup_cpython(session: Session, runner: Runner, python: Path, recreate: bool) -> Path:
    """Create or refresh .venvs/<minor>; return the venv's python."""
    venv = VENVS / session.name
    venv_python = venv / "bin" / "python"
    stamp = venv / "framescope-stamp.json"
    torch = TORCH.get(session.name)
    extras = [torch] if torch else []
    wanted = {
        "python": str(python.resolve()),
        "version": session.label,
        "repo": str(REPO),
        "pyproject": _digest(REPO / "pyproject.toml"),
        "extras": " ".join(extras),
    }
    if recreate or not venv_python.exists() or not _stamp_matches_python(stamp, wanted):
        if venv.exists():
            runner.say("removing %s" % venv)
            shutil.rmtree(str(venv))
        runner.check([str(python), "-m", "venv", str(venv)], "creating the virtual environment")
    if _stamp_matches(stamp, wanted):
        runner.say("reusing %s (pyproject.toml unchanged)" % venv.relative_to(REPO))
        return venv_python
    if stamp.exists():
        # An interrupted install must not leave a stamp that claims it finished.
        stamp.unlink()
    pip = [str(venv_python), "-m", "pip", "install", "--disable-pip-version-check"]
    target = ".[test-torch]" if torch else ".[test]"
    runner.check(pip + ["--progress-bar", "off", "-q", "-e", target] + extras, "pip install", env=pip_env())
    stamp.write_text(json.dumps(wanted, indent=1))
    return venv_python


def pip_env() -> Dict[str, str]:
    """The environment for pip: a machine-wide constraint file may cap torch below the
    release asked for; the torch requirement is pinned exactly, so no cap is needed."""
    return dict(os.environ, PIP_CONSTRAINT=" ")


def _stamp_matches_python(stamp: Path, wanted: Dict[str, str]) -> bool:
    """The venv was made from the same interpreter (other changes only need a pip install)."""
    try:
        old = json.loads(stamp.read_text())
    except (OSError, ValueError):
        # No stamp: a venv whose install never finished; start it afresh.
        return False
    return all(old.get(k) == wanted[k] for k in ("python", "version", "repo"))


def run_cpython(session: Session, runner: Runner, args: argparse.Namespace) -> None:
    python = find_cpython(session.name)
    if python is None:
        session.status = "missing"
        runner.say(
            "CPython %s is not installed: expected %s"
            % (session.name, pyenv_root() / "versions" / CPYTHONS[session.name] / "bin" / "python")
        )
        return
    session.label = "CPython " + cpython_version(python)
    if session.label != "CPython " + CPYTHONS[session.name]:
        runner.say("CPython %s is not installed; using %s" % (CPYTHONS[session.name], python))
    start = time.monotonic()
    try:
        venv_python = setup_cpython(session, runner, python, args.recreate)
    finally:
        session.setup_s = time.monotonic() - start
    env = dict(os.environ)
    if session.name in TORCH:
        # torch and the test-torch extra are installed here on purpose: a test that skips for
        # want of one of them is a failure.
        env["FRAMESCOPE_REQUIRE_TORCH"] = "1"
    cmd = [str(venv_python), "-m", "pytest"] + pytest_args(session, args)
    run_pytest(session, runner, cmd, env, args.timeout)


# --------------------------------------------------------------------------- Pyodide


def host_pip() -> List[str]:
    """A pip to download wheels with: this interpreter's, else any pyenv CPython's."""
    candidates = [Path(sys.executable)]
    candidates += [p for p in (find_cpython(m) for m in reversed(list(CPYTHONS))) if p]
    for python in candidates:
        probe = subprocess.run(
            [str(python), "-m", "pip", "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        if probe.returncode == 0:
            return [str(python), "-m", "pip"]
    raise SetupError("no python with pip found to download the Pyodide test wheels")


def setup_pyodide(runner: Runner, recreate: bool) -> None:
    """Install the pinned Pyodide into .pyodide/ and unpack the test wheels into .pyodide/site."""
    if recreate and PYODIDE_HOME.exists():
        runner.say("removing %s" % PYODIDE_HOME)
        shutil.rmtree(str(PYODIDE_HOME))
    PYODIDE_HOME.mkdir(exist_ok=True)
    npm = shutil.which("npm")
    if npm is None:
        raise SetupError("npm is not installed; Node.js 18 or later with npm is needed for Pyodide")
    lock = PYODIDE_SPEC / "package-lock.json"
    manifest = PYODIDE_SPEC / "package.json"
    stamp = PYODIDE_HOME / "npm-stamp.json"
    wanted = {"npm": _digest(manifest, lock)}
    if not (_stamp_matches(stamp, wanted) and (PYODIDE_HOME / "node_modules" / "pyodide").is_dir()):
        shutil.copyfile(str(manifest), str(PYODIDE_HOME / "package.json"))
        shutil.copyfile(str(lock), str(PYODIDE_HOME / "package-lock.json"))
        runner.check(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], "npm ci", cwd=PYODIDE_HOME
        )
        stamp.write_text(json.dumps(wanted))
    else:
        runner.say("reusing .pyodide/node_modules (package-lock.json unchanged)")

    requirements = PYODIDE_SPEC / "requirements.txt"
    wheels, site = PYODIDE_HOME / "wheels", PYODIDE_HOME / "site"
    stamp = PYODIDE_HOME / "wheels-stamp.json"
    wanted = {"wheels": _digest(requirements)}
    if _stamp_matches(stamp, wanted) and site.is_dir():
        runner.say("reusing .pyodide/site (requirements.txt unchanged)")
        return
    for path in (wheels, site):
        if path.exists():
            shutil.rmtree(str(path))
    # Only wheels that any Python 3.14 can import: Pyodide cannot load manylinux binaries.
    runner.check(
        host_pip()
        + ["download", "--disable-pip-version-check", "--progress-bar", "off", "-q"]
        + ["--only-binary=:all:", "--python-version", PYODIDE, "--implementation", "py"]
        + ["--abi", "none", "--platform", "any", "-d", str(wheels), "-r", str(requirements)],
        "downloading the Pyodide test wheels",
    )
    site.mkdir()
    for wheel in sorted(wheels.glob("*.whl")):
        runner.say("unpacking " + wheel.name)
        with zipfile.ZipFile(str(wheel)) as archive:
            archive.extractall(str(site))
    stamp.write_text(json.dumps(wanted))


def run_pyodide(session: Session, runner: Runner, args: argparse.Namespace) -> None:
    node = shutil.which("node")
    if node is None:
        session.status = "missing"
        runner.say("Node.js is not installed; Pyodide needs Node.js 18 or later")
        return
    start = time.monotonic()
    try:
        setup_pyodide(runner, args.recreate)
    finally:
        session.setup_s = time.monotonic() - start
    cmd = [node, str(PYODIDE_SPEC / "run_tests.mjs"), "--pyodide-dir", str(PYODIDE_HOME), "--"]
    run_pytest(session, runner, cmd + pytest_args(session, args), dict(os.environ), args.timeout)


# --------------------------------------------------------------------------- sessions

# pytest's closing line, e.g. "==== 3 failed, 120 passed, 2 skipped in 4.56s ====".
SUMMARY = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+|no tests ran)\s+in [\d.]+s\b")
COUNT = re.compile(r"(\d+) (\w+)")


def parse_counts(output: str) -> Dict[str, int]:
    for line in reversed(output.splitlines()):
        match = SUMMARY.match(line.strip())
        if match:
            counts: Dict[str, int] = {}
            for number, word in COUNT.findall(match.group(1)):
                word = {"errors": "error", "warnings": "warning"}.get(word, word)
                counts[word] = counts.get(word, 0) + int(number)
            return counts
    return {}


def pytest_args(session: Session, args: argparse.Namespace) -> List[str]:
    # One cache per interpreter: sessions run side by side, and --lf means per interpreter.
    joined = " ".join(args.pytest_args).replace(" ", "")
    if "no:cacheprovider" in joined:
        return list(args.pytest_args)
    return ["-o", "cache_dir=.pytest_cache/" + session.name] + args.pytest_args


def run_pytest(session: Session, runner: Runner, cmd: List[str], env: Dict[str, str], timeout: float) -> None:
    env.setdefault("PYTHONUNBUFFERED", "1")
    start = time.monotonic()
    rc, output = runner.run(cmd, env=env, timeout=timeout)
    session.test_s = time.monotonic() - start
    session.counts = parse_counts(output)
    if rc == 0:
        session.status = "ok"
    elif rc == -1:
        session.status = "timeout"
    elif rc == 5:
        session.status = "no tests"
    else:
        session.status = "FAILED"


def run_session(session: Session, args: argparse.Namespace, stream: bool) -> Session:
    """Set up and run one session; its output ends up in session.output."""
    if not stream:
        emit("started %s\n" % session.label)
    runner = Runner(stream)
    try:
        if session.name == PYODIDE:
            run_pyodide(session, runner, args)
        else:
            run_cpython(session, runner, args)
    except SetupError as exc:
        session.status = "setup failed"
        runner.say("!! %s" % exc)
    except subprocess.TimeoutExpired as exc:
        session.status = "setup failed"
        runner.say("!! %s timed out" % exc.cmd[0])
    except Exception as exc:  # one broken session must not take the others' results with it
        session.status = "setup failed"
        runner.say("!! %s: %s" % (type(exc).__name__, exc))
    session.output = runner.output
    return session


# Sessions report from several threads; whole sections must not interleave.
_print_lock = threading.Lock()


def emit(text: str) -> None:
    with _print_lock:
        sys.stdout.write(text)
        sys.stdout.flush()


def header(session: Session) -> str:
    return "=" * 30 + " %s (%s) " % (session.label, session.name) + "=" * 30


def print_summary(sessions: List[Session]) -> None:
    cols = ["passed", "failed", "skipped", "xfailed"]
    print()
    print(
        "%-18s %-12s" % ("interpreter", "status")
        + "".join("%9s" % c for c in cols)
        + "%10s%10s" % ("setup s", "tests s")
    )
    totals = dict.fromkeys(cols, 0)
    for s in sessions:
        row = {
            "passed": s.counts.get("passed", 0),
            # Errors in fixtures or collection fail the session just as failed tests do.
            "failed": s.counts.get("failed", 0) + s.counts.get("error", 0),
            "skipped": s.counts.get("skipped", 0),
            "xfailed": s.counts.get("xfailed", 0),
        }
        if not s.ok and row["failed"] == 0:
            # A session that could not run at all still counts as one failure.
            row["failed"] = 1
        for c in cols:
            totals[c] += row[c]
        print(
            "%-18s %-12s" % (s.label, s.status)
            + "".join("%9d" % row[c] for c in cols)
            + "%10.1f%10.1f" % (s.setup_s, s.test_s)
        )
    print()
    print("total: %(passed)d passed, %(failed)d failed, %(skipped)d skipped" % totals)


def parse_args(argv: List[str]) -> argparse.Namespace:
    if "--" in argv:
        split = argv.index("--")
        argv, pytest_args = argv[:split], argv[split + 1 :]
    else:
        pytest_args = []
    parser = argparse.ArgumentParser(
        prog="scripts/test.py",
        description="Run framescope's tests on CPython 3.8-3.13 and on Pyodide (CPython 3.14).",
        epilog="Arguments after -- are passed to pytest, e.g. scripts/test.py --python 3.12 -- -x -k loops",
    )
    choices = list(CPYTHONS) + list(PYODIDE_NAMES)
    parser.add_argument(
        "--python", action="append", metavar="VERSION", choices=choices,
        help="test only this interpreter (%s); may be repeated" % ", ".join(choices),
    )
    parser.add_argument("--pyodide-only", action="store_true", help="test only Pyodide (CPython 3.14)")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="sessions run at once (default 2)")
    parser.add_argument("--recreate", action="store_true", help="rebuild the environments from scratch")
    parser.add_argument(
        "--timeout", type=float, default=50 * 60, metavar="SECONDS",
        help="stop a pytest session that runs longer than this (default 3000)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    wanted = set(PYODIDE if v in PYODIDE_NAMES else v for v in (args.python or []))
    if args.pyodide_only:
        wanted.add(PYODIDE)
    args.names = [n for n in ORDER if n in wanted] if wanted else list(ORDER)
    args.pytest_args = pytest_args
    return args


# The HTML report tests drive this browser; in CI they fail rather than skip without it.
CHROMIUM = (Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver"))


def ensure_chromium() -> None:
    """In CI (CI=true), install Debian's chromium and chromium-driver when missing."""
    if os.environ.get("CI", "").lower() not in ("1", "true", "yes") or all(p.exists() for p in CHROMIUM):
        return
    print("installing chromium and chromium-driver for the HTML report tests", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"]):
        try:
            rc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, timeout=SETUP_TIMEOUT).returncode
        except (OSError, subprocess.SubprocessError) as exc:
            rc = "%s" % exc
        if rc != 0:
            # The browser tests then fail and say what is missing.
            print("!! %s failed (%s)" % (" ".join(cmd), rc), flush=True)
            return


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: List[str]) -> int:
    args = parse_args(argv)
    # Children run in their own process groups, so a plain kill of this process would
    # leave them running: turn SIGTERM and SIGHUP into the Ctrl-C path that ends them.
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    sessions = [
        Session(n, "Pyodide " + n if n == PYODIDE else "CPython " + CPYTHONS[n]) for n in args.names
    ]
    VENVS.mkdir(exist_ok=True)
    ensure_chromium()
    jobs = min(args.jobs, len(sessions))
    print("framescope tests: %s; %d at a time" % (", ".join(s.label for s in sessions), jobs), flush=True)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs) if jobs > 1 else None
    futures = []
    try:
        if pool is None:
            # One at a time: stream straight to the terminal.
            for s in sessions:
                print(header(s), flush=True)
                run_session(s, args, stream=True)
        else:
            futures = [pool.submit(run_session, s, args, False) for s in sessions]
            for future in concurrent.futures.as_completed(futures):
                s = future.result()
                emit(header(s) + "\n" + s.output + ("" if s.output.endswith("\n") else "\n"))
    except KeyboardInterrupt:
        for future in futures:
            future.cancel()
        with Runner.live_lock:
            Runner.stopping.set()
            for proc in list(Runner.live):
                _kill(proc)
        if pool is not None:
            pool.shutdown(wait=True)
        print("\ninterrupted", file=sys.stderr)
        return 130
    if pool is not None:
        pool.shutdown(wait=True)
    order = {n: i for i, n in enumerate(list(CPYTHONS) + [PYODIDE])}
    sessions.sort(key=lambda s: order[s.name])
    print_summary(sessions)
    return 0 if all(s.ok for s in sessions) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
