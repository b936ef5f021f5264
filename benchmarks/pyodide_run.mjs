// Run a Python script of this repository under CPython 3.14 in Pyodide (WebAssembly).
//
//   node benchmarks/pyodide_run.mjs SCRIPT [ARGS...]
//
// The repository is mounted at /repo (the working directory there), /repo/src
// is put first on sys.path, and SCRIPT (relative to the repository) runs as
// __main__ with ARGS as sys.argv[1:].  The exit status is the script's.
// Folders outside the repository that the script reads (a corpus, say) are named in
// PYODIDE_MOUNTS, separated by ':'; each is mounted at its own absolute path.
// Pyodide is loaded from PYODIDE_DIR (default: .pyodide/node_modules/pyodide
// in the repository; `npm install pyodide@314.0.7` in .pyodide/ puts it there).
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pyodideDir = path.resolve(process.env.PYODIDE_DIR || path.join(repo, ".pyodide", "node_modules", "pyodide"));
const [script, ...args] = process.argv.slice(2);
if (!script) {
  console.error("usage: node benchmarks/pyodide_run.mjs SCRIPT [ARGS...]");
  process.exit(2);
}
const entry = path.join(pyodideDir, "pyodide.mjs");
if (!existsSync(entry)) {
  console.error(`pyodide not found at ${pyodideDir}: run 'npm install pyodide@314.0.7' in ${path.join(repo, ".pyodide")}`);
  process.exit(2);
}

const { loadPyodide } = await import(pathToFileURL(entry).href);
const py = await loadPyodide({ indexURL: pyodideDir + path.sep });
// Line-buffered output through Node's own streams, so that a parent process sees it as it comes.
py.setStdout({ batched: (line) => process.stdout.write(line + "\n") });
py.setStderr({ batched: (line) => process.stderr.write(line + "\n") });
py.FS.mkdirTree("/repo");
py.FS.mount(py.FS.filesystems.NODEFS, { root: repo }, "/repo");
for (const folder of (process.env.PYODIDE_MOUNTS || "").split(":").filter(Boolean)) {
  const where = path.resolve(folder);
  if (!existsSync(where)) {
    console.error(`PYODIDE_MOUNTS: no such folder: ${where}`);
    process.exit(2);
  }
  py.FS.mkdirTree(where);
  py.FS.mount(py.FS.filesystems.NODEFS, { root: where }, where);
}
py.globals.set("_framescope_argv", py.toPy([script, ...args]));
const status = py.runPython(`
import os, runpy, sys, traceback
os.chdir("/repo")
sys.path.insert(0, "/repo/src")
sys.argv = list(_framescope_argv)
del _framescope_argv
def _framescope_main():
    if not os.path.isfile(sys.argv[0]):
        print("no such script in the repository: %s" % sys.argv[0], file=sys.stderr)
        return 2
    try:
        runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exit:
        code = exit.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    return 0
_framescope_main()
`);
process.exit(status);
