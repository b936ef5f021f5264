"""Log every call of this module's functions with its arguments, using a frame hook.

The callback prints the frame's arguments and returns RUN_ORIGINAL, so the frame runs as
usual and the next call of the same function is logged too. Frames of other modules are
skipped for good (the callback returns None for them).

    python examples/evalframe_tracer.py
"""
import inspect

from framescope import evalframe


def argument_names(code):
    """The names of a code object's arguments, *args and **kwargs included."""
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return code.co_varnames[:count]


def safe_repr(value):
    # A method's self may be half-built (in __init__), so its __repr__ can fail.
    try:
        return repr(value)
    except Exception:
        return "<%s object>" % type(value).__name__


def tracer(frame, cache_entries, frame_state):
    if frame.f_globals.get("__name__") != __name__:
        return None  # not this module's code: run it and never ask again
    code = frame.f_code
    frame_state["calls"] = frame_state.get("calls", 0) + 1
    arguments = ", ".join("%s=%s" % (name, safe_repr(frame.f_locals[name])) for name in argument_names(code))
    print("call %d of %s(%s)" % (frame_state["calls"], getattr(code, "co_qualname", code.co_name), arguments))
    return evalframe.RUN_ORIGINAL


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Account:
    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance

    def deposit(self, amount, *, note=""):
        self.balance += amount
        return self.balance

    def __repr__(self):
        return "Account(%r)" % self.owner


def main():
    with evalframe.hook(tracer):
        result = fib(4)
        account = Account("ada")
        account.deposit(10, note="salary")
    print("fib(4) = %d, balance = %d" % (result, account.balance))


if __name__ == "__main__":
    main()
