"""A small Debug Adapter Protocol client, enough to drive debugpy the way VS Code does.

It starts ``python -m debugpy --listen HOST:PORT --wait-for-client program.py`` (VS Code's
"attach" to a waiting program), connects to the adapter's socket and speaks DAP: requests,
their responses and the adapter's events. Every read has a deadline, so a debugger that
never answers fails the test instead of hanging it; :meth:`Debuggee.close` kills the
program and its adapter.

::

    with Debuggee.start([python, "prog.py"], cwd=folder) as session:
        session.attach(breakpoints={"/abs/dump/__transformed_code_0_for_f.py": [12]})
        stop = session.wait_stopped()
        frame = session.top_frame(stop)
        value = session.local(frame, "x")
        session.resume(stop)
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

Message = Dict[str, Any]


class DapError(AssertionError):
    """The debugger did not answer as expected (a failed request, a timeout, an exit)."""


class DapConnection:
    """One DAP connection over a socket: framed JSON messages in both directions."""

    def __init__(self, sock: socket.socket) -> None:
        #: The connected socket.
        self.sock = sock
        #: Bytes received but not yet parsed.
        self._buffer = b""
        #: Sequence number of the next request.
        self._seq = 1
        #: Messages read while waiting for another one, oldest first.
        self.backlog: List[Message] = []
        #: Every event seen, in order (for assertions and failure messages).
        self.events: List[Message] = []
        #: Text of the debuggee's ``output`` events.
        self.output: List[str] = []

    # ------------------------------------------------------------------ raw messages

    def send(self, command: str, arguments: Optional[Dict[str, Any]] = None) -> int:
        """Send a request; return its sequence number."""
        seq = self._seq
        self._seq += 1
        message: Message = {"seq": seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        body = json.dumps(message).encode("utf-8")
        self.sock.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        return seq

    def _read_message(self, deadline: float) -> Message:
        while True:
            header_end = self._buffer.find(b"\r\n\r\n")
            if header_end >= 0:
                length = None
                for line in self._buffer[:header_end].split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length is None:
                    raise DapError("DAP message without Content-Length: %r" % self._buffer[:header_end])
                start = header_end + 4
                if len(self._buffer) >= start + length:
                    body = self._buffer[start : start + length]
                    self._buffer = self._buffer[start + length :]
                    message = json.loads(body.decode("utf-8"))
                    if message.get("type") == "event":
                        self.events.append(message)
                        if message.get("event") == "output":
                            self.output.append(message.get("body", {}).get("output", ""))
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout()
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise DapError("the debug adapter closed the connection")
            self._buffer += chunk

    def wait_for(self, accept: Callable[[Message], bool], timeout: float, what: str) -> Message:
        """The first message (backlog first) that ``accept`` takes; others stay in the backlog."""
        for n, message in enumerate(self.backlog):
            if accept(message):
                del self.backlog[n]
                return message
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self._read_message(deadline)
            except socket.timeout:
                seen = ", ".join(_describe(m) for m in self.events[-12:]) or "none"
                raise DapError("no %s within %ss (last events: %s)" % (what, timeout, seen)) from None
            if accept(message):
                return message
            self.backlog.append(message)

    # ------------------------------------------------------------------ requests and events

    def request(self, command: str, arguments: Optional[Dict[str, Any]] = None, timeout: float = 30) -> Any:
        """Send a request and return the body of its successful response."""
        return self.response(self.send(command, arguments), command, timeout)

    def response(self, seq: int, command: str, timeout: float = 30) -> Any:
        """The body of the response to request ``seq``; DapError if it failed."""
        message = self.wait_for(
            lambda m: m.get("type") == "response" and m.get("request_seq") == seq,
            timeout,
            "response to %s" % command,
        )
        if not message.get("success"):
            raise DapError("%s failed: %s" % (command, message.get("message") or message.get("body")))
        return message.get("body") or {}

    def event(self, name: str, timeout: float = 30, accept: Callable[[Message], bool] = lambda m: True) -> Any:
        """The body of the next event called ``name`` that ``accept`` takes."""
        message = self.wait_for(
            lambda m: m.get("type") == "event" and m.get("event") == name and accept(m),
            timeout,
            "%s event" % name,
        )
        return message.get("body") or {}


def _describe(message: Message) -> str:
    body = message.get("body") or {}
    if message.get("event") == "stopped":
        return "stopped(%s)" % body.get("reason")
    if message.get("event") == "output":
        return "output(%r)" % body.get("output", "")[:60]
    return str(message.get("event"))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Debuggee:
    """A program started under debugpy, waiting for a client, and the client's connection."""

    def __init__(self, process: subprocess.Popen, connection: DapConnection, log: Any) -> None:
        #: The debugged program (debugpy's CLI runs it in this process; the adapter is its
        #: child, in the same new process group).
        self.process = process
        #: The DAP connection to debugpy's adapter.
        self.dap = connection
        #: The file the program's stdout and stderr go to (a pipe nobody reads could fill).
        self.log = log

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        cwd: str,
        env: Optional[Dict[str, str]] = None,
        connect_timeout: float = 60,
    ) -> "Debuggee":
        """Run ``argv`` (``[python, script, args...]``) under ``debugpy --listen`` and connect."""
        python, *program = argv
        port = free_port()
        command = [python, "-m", "debugpy", "--listen", "127.0.0.1:%d" % port, "--wait-for-client", *program]
        log = tempfile.TemporaryFile()
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            sock = _connect(port, process, log, connect_timeout)
        except BaseException:
            _kill(process)
            log.close()
            raise
        return cls(process, DapConnection(sock), log)

    def __enter__(self) -> "Debuggee":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ a session

    def attach(
        self,
        breakpoints: Dict[str, List[int]],
        just_my_code: bool = True,
        timeout: float = 60,
    ) -> Dict[str, List[Message]]:
        """initialize, attach, setBreakpoints per file, configurationDone: the program runs.

        Returns the adapter's answer per file: one ``Breakpoint`` (``verified``, ``line``,
        ``message``) per requested line.
        """
        dap = self.dap
        dap.request(
            "initialize",
            {
                "clientID": "framescope-tests",
                "adapterID": "debugpy",
                "pathFormat": "path",
                "linesStartAt1": True,
                "columnsStartAt1": True,
                "supportsVariableType": True,
            },
            timeout,
        )
        attach = dap.send("attach", {"justMyCode": just_my_code, "redirectOutput": True})
        dap.event("initialized", timeout)
        answers = {}
        for path, lines in breakpoints.items():
            body = dap.request(
                "setBreakpoints",
                {"source": {"path": path}, "breakpoints": [{"line": line} for line in lines]},
                timeout,
            )
            answers[path] = body.get("breakpoints", [])
        dap.request("configurationDone", {}, timeout)
        dap.response(attach, "attach", timeout)
        return answers

    def wait_stopped(self, timeout: float = 60) -> Dict[str, Any]:
        """The body of the next ``stopped`` event (``reason``, ``threadId``)."""
        return self.dap.event("stopped", timeout)

    def frames(self, stop: Dict[str, Any], levels: int = 20) -> List[Message]:
        """The stack of the stopped thread, innermost first."""
        body = self.dap.request("stackTrace", {"threadId": stop["threadId"], "startFrame": 0, "levels": levels})
        return body.get("stackFrames", [])

    def top_frame(self, stop: Dict[str, Any]) -> Message:
        """The innermost frame of the stopped thread: ``source.path``, ``line``, ``id``."""
        frames = self.frames(stop, levels=1)
        if not frames:
            raise DapError("stackTrace returned no frames")
        return frames[0]

    def locals(self, frame: Message) -> Dict[str, str]:
        """name -> value text of the frame's local variables (the first scope)."""
        scopes = self.dap.request("scopes", {"frameId": frame["id"]}).get("scopes", [])
        if not scopes:
            raise DapError("scopes returned nothing for frame %s" % frame.get("name"))
        reference = scopes[0]["variablesReference"]
        variables = self.dap.request("variables", {"variablesReference": reference}).get("variables", [])
        return {item["name"]: item["value"] for item in variables}

    def evaluate(self, frame: Message, expression: str) -> str:
        """The value text of ``expression`` in ``frame`` (the Debug Console's evaluation)."""
        body = self.dap.request("evaluate", {"expression": expression, "frameId": frame["id"], "context": "repl"})
        return body.get("result", "")

    def step_in(self, stop: Dict[str, Any], timeout: float = 60) -> Dict[str, Any]:
        """Step into (F11) and return the next ``stopped`` event."""
        self.dap.request("stepIn", {"threadId": stop["threadId"]})
        return self.wait_stopped(timeout)

    def resume(self, stop: Dict[str, Any]) -> None:
        """Continue the stopped thread."""
        self.dap.request("continue", {"threadId": stop["threadId"]})

    def wait_exit(self, timeout: float = 60) -> int:
        """The program's exit code, after it ran to its end (the adapter then says
        ``terminated``; an attach session gets no ``exited`` event)."""
        self.dap.event("terminated", timeout)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise DapError("the debug session ended but the program did not within %ss" % timeout) from None

    def program_output(self) -> str:
        """What the program printed so far (stdout and stderr)."""
        return _read_log(self.log)

    def close(self) -> None:
        """Disconnect, then make sure the program and its adapter are gone."""
        try:
            self.dap.sock.close()
        finally:
            _kill(self.process)
            self.log.close()


def _read_log(log: Any) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode("utf-8", "replace")


def _connect(port: int, process: subprocess.Popen, log: Any, timeout: float) -> socket.socket:
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise DapError(
                "the program exited (%s) before debugpy listened:\n%s" % (process.returncode, _read_log(log))
            )
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            if time.monotonic() > deadline:
                raise DapError("debugpy did not listen on port %d within %ss" % (port, timeout)) from None
            time.sleep(0.1)


def _kill(process: subprocess.Popen) -> None:
    # The program was started in a session of its own: its group is the program and the
    # adapter debugpy started for it, nothing else.
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:  # a process that survives SIGKILL: nothing more to do
        pass
