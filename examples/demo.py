"""A small module to decompile: ``framescope decompile examples/demo.py``."""


def fizzbuzz(n):
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out


def safe_div(a, b, *, default=None):
    try:
        return a / b
    except ZeroDivisionError:
        return default
    finally:
        print("divided", a, "by", b)


class Counter:
    def __init__(self, start=0):
        self.value = start

    def bump(self, by=1):
        self.value += by
        return self.value


squares = {k: k * k for k in range(5) if k % 2}
