// Runs framescope's pytest suite on CPython 3.14 compiled to WebAssembly (Pyodide), offline.
//
//   node scripts/pyodide/run_tests.mjs [--pyodide-dir DIR] [-- <pytest args>]
//
// Normally started by `python3 scripts/test.py`, which first installs the pinned Pyodide npm
// package into DIR/node_modules (DIR defaults to <repo>/.pyodide) and unpacks the pure-Python
// test dependencies into DIR/site. Exits with pytest's exit code.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");

// Where the repository appears inside the Emscripten file system.
const MOUNT = "/repo";

// Environment variables that steer the test suite; Pyodide starts with an empty environment.
const PASSED_ENV = /^(CI|NO_COLOR|FORCE_COLOR|COLUMNS|FRAMESCOPE_.*|HYPOTHESIS_.*|PYTEST_.*)$/;

function parseArgs(argv) {
  let pyodideDir = path.join(repo, ".pyodide");
  const pytestArgs = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--") {
      pytestArgs.push(...argv.slice(i + 1));
      break;
    } else if (argv[i] === "--pyodide-dir" && i + 1 < argv.length) {
      pyodideDir = path.resolve(argv[++i]);
    } else {
      pytestArgs.push(argv[i]);
    }
  }
  return { pyodideDir, pytestArgs };
}

function fail(message) {
  process.stderr.write(`run_tests.mjs: ${message}\n`);
  process.exit(4);
}

// Paths inside the repository are handed to Python as their /repo equivalents.
function toMounted(dir) {
  const rel = path.relative(repo, dir);
  if (rel.startsWith("..") || path.isAbsolute(rel)) {
    fail(`${dir} is outside the repository ${repo}, so Pyodide cannot see it`);
  }
  return path.posix.join(MOUNT, ...rel.split(path.sep));
}

const { pyodideDir, pytestArgs } = parseArgs(process.argv.slice(2));
const entry = path.join(pyodideDir, "node_modules", "pyodide", "pyodide.mjs");
const site = path.join(pyodideDir, "site");
if (!existsSync(entry)) {
  fail(`${entry} is missing; run "python3 scripts/test.py --pyodide-only" to install Pyodide`);
}
if (!existsSync(site)) {
  fail(`${site} is missing; run "python3 scripts/test.py --pyodide-only" to fetch the test wheels`);
}

const env = { HOME: "/home/pyodide" };
for (const [key, value] of Object.entries(process.env)) {
  if (PASSED_ENV.test(key)) env[key] = value;
}

const { loadPyodide } = await import(pathToFileURL(entry).href);
const py = await loadPyodide({ env });
// Raw byte streams keep pytest's output exactly as it writes it (no per-line batching).
py.setStdout({ write: (buf) => { process.stdout.write(buf); return buf.length; } });
py.setStderr({ write: (buf) => { process.stderr.write(buf); return buf.length; } });

py.FS.mkdirTree(MOUNT);
py.FS.mount(py.FS.filesystems.NODEFS, { root: repo }, MOUNT);

py.globals.set("_repo", MOUNT);
py.globals.set("_site", toMounted(site));
py.globals.set("_pytest_args", py.toPy(pytestArgs));
const code = py.runPython(`
import os, sys
# Pyodide turns off writing .pyc files; keeping them on the host saves recompiling pytest
# and hypothesis on every run.
sys.dont_write_bytecode = False
os.chdir(_repo)
sys.path[:0] = [_repo + "/src", _site]
import pytest
int(pytest.main(list(_pytest_args)))
`);
// Let pending writes to the terminal drain before exiting.
process.stdout.write("", () => process.exit(code));
