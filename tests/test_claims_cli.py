"""What README.md and docs/ promise of the command line and of ``decompile(partial=True)``,
checked with real processes and real interpreters: a ``.pyc`` of another installed Python,
``.pyc`` files holding opcodes only a running interpreter writes, modules with no Python
bytecode, the function-by-function fallback for a module whose own code is refused,
``framescope report`` when the report cannot be written or Pygments is missing, stubs for
functions the decompiler really refuses, and ``framescope.summary`` of a dump folder."""
import dis
import glob
import importlib.machinery
import importlib.util
import inspect
import marshal
import os
import py_compile
import shutil
import subprocess
import sys

import pytest

import framescope
from framescope.decompiler.verify.equivalence import compare_code

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
SAMPLE = os.path.join(ROOT, "tests", "fixtures", "dump_sample")

needs_subprocess = pytest.mark.needs_subprocess

#: A function the decompiler refuses on every version it reads: the constant recompiled from
#: its source differs from the one in its bytecode.
NEGATIVE_ZERO = "def neg():\n    return -0j\n"


def run(*args, cwd=None, env=None, python=None):
    """``python -m framescope ARGS`` in a fresh process."""
    environment = dict(os.environ if env is None else env)
    environment["PYTHONPATH"] = SRC + os.pathsep + environment.get("PYTHONPATH", "")
    return subprocess.run([python or sys.executable, "-m", "framescope", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, cwd=cwd, env=environment, timeout=300)


def one_line_error(result, status=2):
    return (result.returncode == status and result.stderr.count("\n") == 1
            and result.stderr.startswith("framescope: error: ") and "Traceback" not in result.stderr)


# --------------------------------------------------------------------------- another Python's .pyc


def pyenv_roots():
    roots = [os.environ.get("PYENV_ROOT", "")]
    if sys.platform != "emscripten" and shutil.which("pyenv"):
        try:
            roots.append(subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE, universal_newlines=True,
                                        timeout=30).stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    roots.append(os.path.expanduser("~/.pyenv"))
    return [root for root in roots if root]


def other_pythons():
    """{"3.X": interpreter} for each CPython 3.8-3.13 but the running one that is installed
    (through pyenv, or as pythonX.Y on PATH)."""
    found = {}
    for minor in range(8, 14):
        version = "3.%d" % minor
        if (3, minor) == sys.version_info[:2]:
            continue
        for root in pyenv_roots():
            candidates = sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin", "python")))
            if candidates:
                found[version] = candidates[0]
                break
        else:
            on_path = shutil.which("python" + version)
            if on_path and "shims" not in on_path:
                found[version] = on_path
    return found


OTHER_PYTHONS = other_pythons() if sys.platform != "emscripten" else {}


def by_version(versions):
    return sorted(versions, key=lambda version: tuple(map(int, version.split("."))))

#: Source that every version from 3.8 on decompiles back to the very same text.
OTHER_SOURCE = '''\
import os


def join_all(parts, sep=os.sep):
    out = []
    for part in parts:
        if part:
            out.append(part)
    return sep.join(out)


class Box:
    """Holds one value."""

    def __init__(self, value):
        self.value = value

    def get(self, default=None):
        try:
            return self.value
        except AttributeError:
            return default
'''


def compile_with(python, source, folder, name="other"):
    """The .pyc that ``python -m py_compile`` writes for ``source``."""
    path = os.path.join(str(folder), name + ".py")
    with open(path, "w") as handle:
        handle.write(source)
    subprocess.run([python, "-m", "py_compile", path], check=True, timeout=120)
    (pyc,) = glob.glob(os.path.join(str(folder), "__pycache__", name + ".*.pyc"))
    with open(pyc, "rb") as handle:
        assert handle.read(4) != importlib.util.MAGIC_NUMBER, "the .pyc is of the running version"
    return pyc


@needs_subprocess
@pytest.mark.parametrize("version", by_version(OTHER_PYTHONS) or [
    pytest.param(None, marks=pytest.mark.skip(reason="no other CPython 3.8-3.13 is installed"))])
def test_a_pyc_of_another_installed_python_is_decompiled_by_that_interpreter(tmp_path, version):
    python = OTHER_PYTHONS[version]
    pyc = compile_with(python, OTHER_SOURCE, tmp_path)
    result = run("decompile", pyc, cwd=str(tmp_path))
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert result.stdout == OTHER_SOURCE + "\n" or result.stdout == OTHER_SOURCE
    # The text recompiles, under that very version, to code equivalent to the .pyc's.
    check = ("import marshal, sys\n"
             "from framescope.decompiler.verify.equivalence import compare_code\n"
             "with open(sys.argv[1], 'rb') as handle:\n"
             "    original = marshal.loads(handle.read()[16:])\n"
             "rebuilt = compile(sys.stdin.read(), original.co_filename, 'exec')\n"
             "print(compare_code(original, rebuilt))\n")
    done = subprocess.run([python, "-c", check, pyc], input=result.stdout, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=SRC))
    assert (done.returncode, done.stdout) == (0, "None\n"), done.stderr


@needs_subprocess
@pytest.mark.skipif(not OTHER_PYTHONS, reason="no other CPython 3.8-3.13 is installed")
def test_another_pythons_pyc_keeps_its_exit_status_stubs_and_indent(tmp_path):
    # The interpreter that decompiles it answers for the whole command: its stubs, its stderr
    # and its exit status (1), with the --indent asked for.
    version = by_version(OTHER_PYTHONS)[0]
    source = "def ok(a):\n    if a:\n        return a + 1\n    return 0\n\n\n" + NEGATIVE_ZERO
    pyc = compile_with(OTHER_PYTHONS[version], source, tmp_path, name="mixed")
    result = run("decompile", pyc, "--indent", "2", cwd=str(tmp_path))
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("def ok(a):\n  if a:\n    return a + 1\n  return 0\n")
    assert "def neg():\n  raise NotImplementedError(" in result.stdout
    lines = result.stderr.splitlines()
    assert lines[0] == "framescope: 1 could not be decompiled, written as stubs that raise NotImplementedError:"
    assert len(lines) == 2 and lines[1].startswith("  neg: "), result.stderr


@needs_subprocess
@pytest.mark.skipif(not OTHER_PYTHONS, reason="no other CPython 3.8-3.13 is installed")
def test_without_that_interpreter_framescope_says_which_version_it_needs(tmp_path):
    version = by_version(OTHER_PYTHONS)[-1]
    pyc = compile_with(OTHER_PYTHONS[version], OTHER_SOURCE, tmp_path)
    # No pyenv, no home with one, nothing on PATH: no interpreter of that version is found.
    empty = tmp_path / "empty"
    empty.mkdir()
    env = dict(os.environ, PYENV_ROOT=str(empty), HOME=str(empty), PATH=str(empty))
    result = run("decompile", pyc, cwd=str(tmp_path), env=env)
    assert one_line_error(result), result.stderr
    assert ("was compiled by Python %s; this is Python %d.%d; no Python %s interpreter found to decompile it"
            % ((version,) + sys.version_info[:2] + (version,))) in result.stderr
    assert result.stdout == ""


# --------------------------------------------------------------------------- opcodes of a running interpreter


RUNNING_ONLY = sorted(name for name in dis.opmap if name == "ENTER_EXECUTOR" or name.startswith("INSTRUMENTED_"))

VICTIM = "def call_twice(f, x):\n    return f(f(x))\n\n\nresult = call_twice(abs, -2)\n"


def patched_pyc(folder, where, opname):
    """A .pyc of VICTIM, compiled here, with the opcode of one instruction of ``where`` (the
    function or the module's own code) replaced by ``opname``; the header is kept."""
    source = os.path.join(str(folder), "victim.py")
    with open(source, "w") as handle:
        handle.write(VICTIM)
    pyc = os.path.join(str(folder), "victim.pyc")
    py_compile.compile(source, cfile=pyc, doraise=True)
    with open(pyc, "rb") as handle:
        data = bytearray(handle.read())
    module = marshal.loads(bytes(data[16:]))
    code = module if where == "module" else next(c for c in module.co_consts if hasattr(c, "co_code"))
    # The instruction whose running forms these opcodes stand for: a call (the last in the code).
    offset = [i.offset for i in dis.get_instructions(code) if i.opname in ("CALL", "CALL_FUNCTION")][-1]
    start = 16 + bytes(data[16:]).index(code.co_code)
    assert data[start + offset] == code.co_code[offset]
    data[start + offset] = dis.opmap[opname]
    patched = os.path.join(str(folder), "patched.pyc")
    with open(patched, "wb") as handle:
        handle.write(bytes(data))
    return pyc, patched, offset


@needs_subprocess
@pytest.mark.skipif(sys.version_info < (3, 12), reason="INSTRUMENTED_* opcodes are 3.12+, ENTER_EXECUTOR 3.13+")
@pytest.mark.parametrize("where, opname", [
    ("function", "INSTRUMENTED_CALL"),
    ("module", "INSTRUMENTED_LINE"),
    ("function", "INSTRUMENTED_INSTRUCTION"),
    ("module", "ENTER_EXECUTOR"),
])
def test_a_pyc_with_an_opcode_only_a_running_interpreter_writes_is_a_one_line_error(tmp_path, where, opname):
    if opname not in dis.opmap:
        pytest.skip("%s is not an opcode of Python %d.%d" % ((opname,) + sys.version_info[:2]))
    pyc, patched, offset = patched_pyc(tmp_path, where, opname)
    good = run("decompile", pyc, cwd=str(tmp_path))
    assert (good.returncode, good.stdout) == (0, VICTIM), good.stderr
    result = run("decompile", patched, cwd=str(tmp_path))
    assert one_line_error(result), result.stderr
    assert result.stderr == "framescope: error: %s is corrupt: malformed bytecode (%s at offset %d)\n" % (
        patched, opname, offset)
    assert result.stdout == ""


@pytest.mark.skipif(sys.version_info < (3, 12), reason="INSTRUMENTED_* opcodes are 3.12+, ENTER_EXECUTOR 3.13+")
@pytest.mark.parametrize("where", ["function", "module"])
def test_every_opcode_only_a_running_interpreter_writes_is_refused_in_a_pyc(tmp_path, where):
    # The same refusal, through the reader the command uses, for each such opcode of this version.
    from framescope.decompiler.frontend.pyc import load_pyc
    from framescope.errors import DecompilationError

    assert RUNNING_ONLY
    for opname in RUNNING_ONLY:
        _pyc, patched, offset = patched_pyc(tmp_path, where, opname)
        with pytest.raises(DecompilationError) as refused:
            load_pyc(patched)
        assert str(refused.value) == "%s is corrupt: malformed bytecode (%s at offset %d)" % (patched, opname, offset)


# --------------------------------------------------------------------------- modules with no Python bytecode


def extension_modules():
    """Standard-library modules of this interpreter that are extension modules (.so/.pyd)."""
    found = []
    for name in ("math", "_json", "array", "_csv"):
        spec = importlib.util.find_spec(name)
        if spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            found.append((name, spec.origin))
    return found


@needs_subprocess
def test_a_module_of_extension_code_is_a_one_line_error(tmp_path):
    found = extension_modules()
    if not found:
        pytest.skip("this interpreter builds math, _json, array and _csv into itself")
    for name, origin in found[:2]:
        result = run("decompile", name, cwd=str(tmp_path))
        assert one_line_error(result), result.stderr
        assert result.stderr == "framescope: error: module %s is compiled code (%s): it has no Python bytecode\n" % (
            name, origin)
        assert result.stdout == ""
    # An extension module inside a package of the current folder: the package is imported,
    # the extension is not loaded, and the answer is the same.
    name, origin = found[0]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    copy = tmp_path / "pkg" / ("fast" + importlib.machinery.EXTENSION_SUFFIXES[0])
    shutil.copyfile(origin, str(copy))
    result = run("decompile", "pkg.fast", cwd=str(tmp_path))
    assert one_line_error(result), result.stderr
    assert result.stderr == "framescope: error: module pkg.fast is compiled code (%s): it has no Python bytecode\n" % (
        copy,)


@needs_subprocess
def test_a_built_in_module_and_a_built_in_function_are_one_line_errors(tmp_path):
    builtin = [name for name in ("_abc", "_imp", "builtins") if name in sys.builtin_module_names]
    for name in builtin:
        result = run("decompile", name, cwd=str(tmp_path))
        assert one_line_error(result), result.stderr
        assert result.stderr == ("framescope: error: module %s is built into the interpreter: it has no Python "
                                 "bytecode\n" % name)
    result = run("decompile", "math:sqrt", cwd=str(tmp_path))
    assert one_line_error(result) and result.stdout == "", result.stderr
    assert "builtin_function_or_method" in result.stderr


# --------------------------------------------------------------------------- the function-by-function fallback


#: A module whose own code the decompiler refuses on every version (``global`` at module level
#: is STORE_GLOBAL, which no module-level assignment compiles to), with functions and a class
#: it can decompile, a function it cannot and a method it cannot.
GLOBAL_MODULE = '''\
global counter
counter = 1


def bump(step):
    total = counter
    for _ in range(step):
        total += 1
    return total


''' + NEGATIVE_ZERO + '''

class Meter:
    def read(self, k=3):
        return bump(k)

    def flip(self):
        return -0j
'''


@needs_subprocess
def test_a_module_whose_own_code_is_refused_is_printed_function_by_function(tmp_path):
    (tmp_path / "globals_mod.py").write_text(GLOBAL_MODULE)
    result = run("decompile", "globals_mod.py", cwd=str(tmp_path))
    assert result.returncode == 1, result.stderr
    out = result.stdout
    first = out.splitlines()[0]
    assert first.startswith("# framescope: the module as a whole could not be decompiled: <module>: ")
    assert "STORE_GLOBAL 'counter'" in first
    # The functions and the class are still printed, each as real source...
    assert ("def bump(step):\n    total = counter\n    for _ in range(step):\n        total += 1\n"
            "    return total\n") in out
    assert "class Meter:\n    def read(self, k=3):\n        return bump(k)\n" in out
    # ... a function that cannot be decompiled is a comment, a method of a class a stub.
    assert "# framescope: cannot decompile neg: " in out and "def neg" not in out
    assert "    def flip(self):\n        raise NotImplementedError(" in out
    namespace = {"counter": 10}
    exec(compile(out, "globals_mod.py", "exec"), namespace)
    assert namespace["bump"](2) == 12 and namespace["Meter"]().read() == 13
    with pytest.raises(NotImplementedError):
        namespace["Meter"]().flip()
    original = compile(GLOBAL_MODULE, "globals_mod.py", "exec")
    rebuilt = compile(out, "globals_mod.py", "exec")
    assert compare_code(child_code(original, "bump"), child_code(rebuilt, "bump")) is None
    # stderr names what was left out, with the reason.
    lines = result.stderr.splitlines()
    assert lines[0] == "framescope: 3 could not be decompiled, left out, a comment or a stub in their place:"
    assert lines[1].startswith("  the module's own code: <module>: ") and "STORE_GLOBAL" in lines[1]
    assert lines[2].startswith("  neg: recompiled code differs") and "-0j" in lines[2], result.stderr
    assert lines[3].startswith("  Meter.flip: ") and "-0j" in lines[3], result.stderr


@needs_subprocess
def test_the_fallback_names_each_stub_on_stderr(tmp_path):
    (tmp_path / "globals_mod.py").write_text(GLOBAL_MODULE)
    result = run("decompile", "globals_mod.py", cwd=str(tmp_path))
    assert "    def flip(self):\n        raise NotImplementedError(" in result.stdout
    assert any("flip: " in line and "-0j" in line for line in result.stderr.splitlines()), result.stderr


def child_code(code, name):
    return next(c for c in code.co_consts if getattr(c, "co_name", None) == name)


@needs_subprocess
def test_the_fallback_says_what_the_modules_own_code_gives_a_definition(tmp_path):
    # Defaults, decorators and bases are evaluated by the module's own code, which could not
    # be decompiled: the definitions come without them, and the text says so up front.
    (tmp_path / "defaults_mod.py").write_text(
        "import functools\nglobal counter\ncounter = 1\n\n\nclass Base:\n    pass\n\n\n"
        "@functools.lru_cache()\ndef bump(step=1, *, scale=2):\n    return counter + step * scale\n\n\n"
        "class Meter(Base):\n    def read(self, k=3):\n        return bump(k)\n")
    result = run("decompile", "defaults_mod.py", cwd=str(tmp_path))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1:3] == [
        "# framescope: each function and class below is printed from its own code, without the defaults,",
        "# decorators and bases the module's code gives it"], lines[:3]
    assert "def bump(step, *, scale):\n" in result.stdout and "class Meter:\n" in result.stdout


# --------------------------------------------------------------------------- framescope report


@pytest.fixture
def sample(tmp_path):
    folder = tmp_path / "dump"
    shutil.copytree(SAMPLE, str(folder))
    return folder


@needs_subprocess
@pytest.mark.parametrize("blocked", ["a file in place of the folder", "a file in place of its parent",
                                     "a read-only parent"])
def test_a_report_that_cannot_be_written_exits_1(tmp_path, sample, blocked):
    if blocked == "a file in place of the folder":
        (tmp_path / "html").write_text("not a folder")
        out = tmp_path / "html"
    elif blocked == "a file in place of its parent":
        (tmp_path / "html").write_text("not a folder")
        out = tmp_path / "html" / "report"
    else:
        parent = tmp_path / "locked"
        parent.mkdir()
        parent.chmod(0o555)
        try:
            (parent / "probe").write_text("")
        except OSError:
            pass
        else:
            parent.chmod(0o755)
            pytest.skip("a read-only folder still takes files here (root)")
        out = parent / "report"
    try:
        result = run("report", str(sample), "--out", str(out), cwd=str(tmp_path))
    finally:
        if blocked == "a read-only parent":
            (tmp_path / "locked").chmod(0o755)
    assert result.returncode == 1 and result.stdout == "", result.stderr
    assert result.stderr.startswith("framescope: error: cannot write the report to %s: " % out)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert (tmp_path / "html").is_file() or blocked == "a read-only parent"


def hide_pygments(folder):
    """A folder that, first on PYTHONPATH, makes ``import pygments`` fail as when it is not installed."""
    (folder / "pygments").mkdir(parents=True)
    (folder / "pygments" / "__init__.py").write_text("raise ImportError('No module named pygments')\n")
    return folder


@needs_subprocess
def test_report_without_pygments_says_so_on_stderr_and_writes_plain_code(tmp_path, sample):
    hidden = hide_pygments(tmp_path / "no_pygments")
    env = dict(os.environ, PYTHONPATH=str(hidden))
    out = tmp_path / "plain"
    result = run("report", str(sample), "--out", str(out), cwd=str(tmp_path), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ("framescope: Pygments is not installed, so code is not highlighted "
                             "(pip install 'framescope[report]')\n")
    assert result.stdout == "%s\n" % (out / "index.html")
    page = (out / "frame_f.html").read_text(encoding="utf-8")
    assert '<span class="k">' not in page and "def f(" in page
    assert ".hl .k" not in (out / "report.css").read_text(encoding="utf-8")
    if importlib.util.find_spec("pygments") is None:
        return
    # With Pygments: no note, and the code is highlighted.
    coloured = tmp_path / "coloured"
    result = run("report", str(sample), "--out", str(coloured), cwd=str(tmp_path))
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert '<span class="k">' in (coloured / "frame_f.html").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- decompile(partial=True)


#: A loop with no target (``for [] in x``): refused on every version 3.8-3.14.
NO_TARGET = "def neg(x):\n    for [] in x:\n        pass\n"

PARTIAL_MODULE = '''\
def add(a, b=1):
    return a + b


''' + NO_TARGET + '''

class Shape:
    def area(self, w, h):
        return w * h

    def flip(self, *args, k=2, **kw):
        for [] in args:
            pass


TOTAL = add(1)
'''


def test_partial_stubs_a_function_the_decompiler_really_refuses():
    code = compile(PARTIAL_MODULE, "shapes.py", "exec")
    with pytest.raises(framescope.DecompilationError) as strict:
        framescope.decompile(code)  # strict by default
    assert "neg" in str(strict.value) and "for loop without a target" in str(strict.value)
    text = framescope.decompile(code, partial=True)
    original = {}
    exec(code, original)
    rebuilt = {}
    exec(compile(text, "shapes.py", "exec"), rebuilt)
    # The stubs: same signature, NotImplementedError with the reason, the reason and the
    # disassembly in a comment above.
    for qualname, get in (("neg", lambda ns: ns["neg"]), ("Shape.flip", lambda ns: ns["Shape"].flip)):
        name = qualname.rpartition(".")[2]
        assert inspect.signature(get(rebuilt)) == inspect.signature(get(original))
        with pytest.raises(NotImplementedError) as raised:
            get(rebuilt)(*(([],) if name == "neg" else (rebuilt["Shape"](),)))
        message = str(raised.value)
        assert message.startswith("framescope could not decompile %s: " % name), message
        assert "for loop without a target" in message
        comment = text[text.index("# framescope: cannot decompile %s: " % qualname):text.index("def %s(" % name)]
        lines = [line.strip() for line in comment.splitlines() if line.strip()]
        assert all(line.startswith("#") for line in lines) and "for loop without a target" in lines[0]
        assert "FOR_ITER" in comment
    # The rest is real source: the same values, and each function recompiles to its instructions.
    assert rebuilt["TOTAL"] == 2 and rebuilt["add"](2, 3) == 5 and rebuilt["Shape"]().area(2, 3) == 6
    module = compile(text, "shapes.py", "exec")
    for old, new in ((child_code(code, "add"), child_code(module, "add")),
                     (child_code(child_code(code, "Shape"), "area"), child_code(child_code(module, "Shape"), "area"))):
        assert compare_code(old, new) is None
        assert instructions(old) == instructions(new)


def instructions(code):
    return [(i.opname, i.argval if not hasattr(i.argval, "co_code") else i.argval.co_name)
            for i in dis.get_instructions(code)]


# --------------------------------------------------------------------------- framescope.summary


def test_summary_of_a_dump_folder_as_text_and_html(sample, monkeypatch):
    monkeypatch.chdir(str(sample.parent))
    shown = framescope.summary("dump")
    lines = repr(shown).splitlines()
    assert lines[0] == ("framescope: 3 compiled frames, 6 cache entries, 3 recompiles, 2 graph breaks, 6 graphs; "
                        "2.11 s compiling")
    assert lines[1] == "dump: dump"
    assert lines[2] == "  recompile of f at /fixture/prog.py:7: mode == 'sin' (entry 0/0)"
    assert lines[5].startswith("  graph break at /fixture/prog.py:13: Failed to trace builtin operator")
    assert not (sample / "report").exists()  # text alone writes nothing
    html = shown._repr_html_()
    assert html.startswith('<div class="framescope-summary">')
    assert "<h4>Recompiles</h4>" in html and "<h4>Graph breaks</h4>" in html
    assert "__transformed_code_0_for_f.py" in html and '<a href="dump/report/index.html"' in html
    assert (sample / "report" / "index.html").is_file()
    # A folder that is no dump is said in one line, not raised.
    assert repr(framescope.summary("nowhere")).startswith("framescope summary of nowhere: ")
