"""Count the frames a hook sees: always skip, always hit, always miss.

Calls ``f, g, f, g, f`` under a callback that either skips each code object (the callback
sees f and g once each), installs a cache entry whose guard always passes (later calls run
the entry: the guard is called, the callback is not), or one whose guard always fails (every
call misses, so the callback sees each call and the entries pile up).

    python examples/evalframe_counter.py            # all three
    python examples/evalframe_counter.py miss       # one of skip, hit, miss
"""
import sys

from framescope import evalframe


def full_function_name(frame):
    function_name = frame.f_code.co_name
    try:
        function_name = type(frame.f_locals["self"]).__name__ + "." + function_name
    except KeyError:
        pass
    return "%s.%s" % (frame.f_globals.get("__name__", "empty module"), function_name)


class Always:
    """A guard that prints each call and always gives the same answer."""

    def __init__(self, hit=True):
        self.hit = hit
        self.calls = 0

    def __call__(self, f_locals):
        self.calls += 1
        print("guard called with %d args." % len(f_locals))
        return self.hit


class Counter:
    """A callback that counts its calls and the cache entries it is shown."""

    def __init__(self, skip, hit=False):
        self.count = 0
        self.skip = skip
        self.guard = Always(hit=hit)
        #: Number of cache entries of the code object at each call.
        self.cache_sizes = []

    def __call__(self, frame, cache_entries, frame_state):
        self.count += 1
        cache_len = len(cache_entries)
        self.cache_sizes.append(cache_len)
        print("calling the %d-th function: %s" % (self.count, full_function_name(frame)))
        print("the function has %d cache entries now." % cache_len)
        # Kept as in the original post: prints the value stored by the first call.
        if "cache_len" in frame_state:
            cache_len = frame_state["cache_len"]
            print("number of caches in the last call: %d" % cache_len)
        frame_state["cache_len"] = cache_len

        if self.skip:
            return None
        return evalframe.GuardedCode(code=frame.f_code, guard=self.guard)


def f(x):
    return x + 1


def g(x):
    return x + 2


def run(skip, hit=False):
    """Call f, g, f, g, f under a Counter; return it."""
    counter = Counter(skip=skip, hit=hit)
    with evalframe.hook(counter):
        x = 1
        x = f(x)
        x = g(x)
        x = f(x)
        x = g(x)
        x = f(x)
    assert x == 8
    return counter


MODES = {"skip": dict(skip=True), "hit": dict(skip=False, hit=True), "miss": dict(skip=False, hit=False)}


def main(argv):
    for mode in argv or list(MODES):
        print("== always %s" % mode)
        counter = run(**MODES[mode])
        print(
            "callback calls: %d, guard calls: %d, cache sizes seen: %s"
            % (counter.count, counter.guard.calls, counter.cache_sizes)
        )


if __name__ == "__main__":
    main(sys.argv[1:])
