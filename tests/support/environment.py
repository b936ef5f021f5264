"""The environment of a program a test starts: framescope from this checkout, output
unbuffered (in order with a debugger's), and none of the variables of the test's own run
that would change what the program does (torch's logs, a breakpoint hook, a distributed
rank)."""
import os
from pathlib import Path
from typing import Dict

ROOT = Path(__file__).resolve().parents[2]

#: Variables of the test run that the program must not inherit.
CLEARED = ("TORCH_LOGS", "PYTHONBREAKPOINT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


def program_environment(**extra: str) -> Dict[str, str]:
    """``os.environ`` made fit for a program under test, then ``extra``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    for name in CLEARED:
        env.pop(name, None)
    env.update(extra)
    return env
