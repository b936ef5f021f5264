"""A Jupyter kernel driven the way JupyterLab and VS Code debug one: code over the shell
channel, Debug Adapter Protocol requests over the control channel (``debug_request``), DAP
events from the kernel's debugpy on iopub (``debug_event``)."""
from __future__ import annotations

import queue
import time
from typing import Any, Dict, List, Optional


class Kernel:
    """A fresh ``python3`` kernel (ipykernel with debugpy) whose working folder is ``cwd``."""

    def __init__(self, cwd: str) -> None:
        from jupyter_client.manager import KernelManager

        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=cwd)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)
        self.seq = 0
        #: Every DAP event seen so far, in order.
        self.events: List[Dict[str, Any]] = []

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)

    def execute(self, code: str, timeout: float = 600) -> Dict[str, Any]:
        """Run a cell; its execute_reply content (``status`` "ok" or "error")."""
        msg_id = self.client.execute(code)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = self.client.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"]
        raise TimeoutError("the cell did not finish in %d s" % timeout)

    def start(self, code: str) -> str:
        """Start a cell and return at once (its msg_id)."""
        return self.client.execute(code)

    def request(self, command: str, arguments: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """A DAP request to the kernel's debugger; its response."""
        self.seq += 1
        message = self.client.session.msg("debug_request", {
            "type": "request", "seq": self.seq, "command": command, "arguments": arguments or {}})
        self.client.control_channel.send(message)
        while True:
            reply = self.client.control_channel.get_msg(timeout=120)
            if reply["parent_header"].get("msg_id") == message["header"]["msg_id"]:
                return reply["content"]

    def attach(self) -> None:
        """initialize, attach, debugInfo: what a debugging front end sends first."""
        self.request("initialize", {"clientID": "framescope-tests", "adapterID": "python", "pathFormat": "path",
                                    "linesStartAt1": True, "columnsStartAt1": True})
        for command in ("attach", "debugInfo"):
            response = self.request(command)
            if not response.get("success"):
                raise RuntimeError("%s failed: %s" % (command, response.get("message")))

    def wait_event(self, name: str, timeout: float = 300) -> Dict[str, Any]:
        """The next DAP event ``name`` (e.g. "stopped")."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = self.client.get_iopub_msg(timeout=5)
            except queue.Empty:
                continue
            if message["msg_type"] == "debug_event":
                self.events.append(message["content"])
                if message["content"].get("event") == name:
                    return message["content"]
        raise TimeoutError("no %r event in %d s (events: %s)" % (
            name, timeout, [event.get("event") for event in self.events]))
