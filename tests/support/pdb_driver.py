"""Drive a real ``python -m pdb program.py`` through its stdin, one command at a time.

Each command waits for pdb's next prompt, so the answer to a command is exactly the text
pdb (and the program) printed in between. Every wait has a deadline; :meth:`PdbSession.close`
kills the process.

::

    with PdbSession.start([python, "-m", "pdb", "prog.py"], cwd=folder) as pdb:
        pdb.command("break /abs/dump/__transformed_code_0_for_f.py:12")
        answer = pdb.command("continue")
        stop = answer.stop          # Stop(path, line, function) or None
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from typing import Dict, List, NamedTuple, Optional, Sequence

PROMPT = "(Pdb) "
# "> /path/file.py(12)f()" and "> /path/file.py(17)forward()->(tensor(...),)"
_STOP = re.compile(r"^> (?P<path>.+?)\((?P<line>\d+)\)(?P<function>[^()\s]*)\(\)(?P<returned>->.*)?$")


class PdbError(AssertionError):
    """pdb did not answer as expected (no prompt in time, the process ended, a crash)."""


class Stop(NamedTuple):
    """Where pdb stopped."""

    #: The file, as pdb prints it (absolute).
    path: str
    #: The line about to run (or returning).
    line: int
    #: The function's code name.
    function: str
    #: Whether pdb stopped at a return (``--Return--``).
    returning: bool


class Answer(NamedTuple):
    """What one command printed, up to the next prompt."""

    #: The text, without the final prompt.
    text: str

    @property
    def stop(self) -> Optional[Stop]:
        """The last place pdb reported stopping at in this answer, or None."""
        found = None
        for line in self.text.splitlines():
            match = _STOP.match(line)
            if match:
                found = Stop(
                    os.path.normpath(match.group("path")),
                    int(match.group("line")),
                    match.group("function"),
                    match.group("returned") is not None,
                )
        return found


class PdbSession:
    """A program running under pdb, reading commands from a pipe."""

    def __init__(self, process: subprocess.Popen) -> None:
        #: The ``python -m pdb`` process.
        self.process = process
        #: Everything it printed so far (stdout and stderr).
        self.transcript = ""
        self._consumed = 0
        self._changed = threading.Condition()
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @classmethod
    def start(
        cls, argv: Sequence[str], cwd: str, env: Optional[Dict[str, str]] = None, timeout: float = 60
    ) -> "PdbSession":
        """Start ``argv`` (``[python, "-m", "pdb", script, ...]``) and wait for the first prompt."""
        env = dict(os.environ if env is None else env)
        env["PYTHONUNBUFFERED"] = "1"  # program output in order with pdb's
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        session = cls(process)
        try:
            session.wait_prompt(timeout)
        except BaseException:
            session.close()
            raise
        return session

    def __enter__(self) -> "PdbSession":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        fd = stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            with self._changed:
                if not chunk:
                    self._closed = True
                    self._changed.notify_all()
                    return
                self.transcript += chunk.decode("utf-8", "replace")
                self._changed.notify_all()

    def wait_prompt(self, timeout: float = 60) -> Answer:
        """The output up to pdb's next prompt (pdb then waits for a command)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self.transcript.endswith(PROMPT) or len(self.transcript) <= self._consumed:
                if self._closed:
                    raise PdbError(
                        "pdb ended (exit %s) before its prompt; it printed:\n%s"
                        % (self.process.poll(), self.transcript[-4000:])
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise PdbError("no pdb prompt within %ss; last output:\n%s" % (timeout, self.transcript[-4000:]))
                self._changed.wait(left)
            text = self.transcript[self._consumed : -len(PROMPT)]
            self._consumed = len(self.transcript)
        if "Uncaught exception. Entering post mortem debugging" in text:
            raise PdbError("the program raised under pdb:\n%s" % text)
        return Answer(text)

    def command(self, line: str, timeout: float = 60) -> Answer:
        """Send one command and return what it printed up to the next prompt."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write((line + "\n").encode("utf-8"))
            stdin.flush()
        except BrokenPipeError:
            raise PdbError("pdb is gone; it printed:\n%s" % self.transcript[-4000:]) from None
        return self.wait_prompt(timeout)

    def quit(self, timeout: float = 30) -> int:
        """Send ``quit`` and return pdb's exit status."""
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(b"quit\n")
            stdin.flush()
            stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise PdbError("pdb did not quit within %ss" % timeout) from None

    def close(self) -> None:
        """Kill pdb and the program (one process, in a session of its own)."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self._reader.join(5)

    def stops_until_end(self, limit: int = 50, timeout: float = 120) -> List[Stop]:
        """``continue`` until the program ends (pdb says it will restart); the stops met."""
        stops = []
        for _ in range(limit):
            answer = self.command("continue", timeout)
            if "The program finished and will be restarted" in answer.text:
                return stops
            if answer.stop is None:
                raise PdbError("continue neither stopped nor finished:\n%s" % answer.text)
            stops.append(answer.stop)
        raise PdbError("more than %d stops" % limit)


def program_lines(text: str, prefix: str) -> List[str]:
    """The lines of ``text`` that start with ``prefix`` (the program's own output lines)."""
    found = []
    for line in text.splitlines():
        # A program line may follow a prompt on the same line: "(Pdb) R1 ...".
        while line.startswith(PROMPT):
            line = line[len(PROMPT) :]
        if line.startswith(prefix):
            found.append(line)
    return found
