"""Round-trip cases for classes defined in functions: annotations, dataclasses, bases and
keywords, class-body names the compiler also stores, and 3.12+ generic definitions."""
from typing import List

from tests.decompiler.cases import Case

CASES: List[Case] = [
    # Up to 3.13 a class body stores each annotation in ``__annotations__``; 3.14 returns
    # them from an ``__annotate__`` function.
    Case("class_annotations",
         "def f(a):\n    class C:\n        x: int\n        y: str = 'a'\n        z: 'list[int]' = a\n"
         "        def m(self) -> int:\n            return self.z\n"
         "    return sorted(C.__annotations__), C.y, C.z, C().m()", ["(1,)"]),
    Case("class_conditional_annotation",
         "def f(a):\n    class C:\n        x: int\n        if a:\n            w: float = 1.5\n"
         "    return sorted(C.__annotations__)", ["(1,)", "(0,)"]),
    Case("class_conditional_annotation_arms",
         "def f(a):\n    class C:\n        x: int\n        if a:\n            w: float\n        else:\n"
         "            z: int = 3\n            q = 2\n        for i in a or ():\n            y: str = i\n"
         "        v: int = 2\n    return sorted(C.__annotations__), C.v", ["((1,),)", "(0,)"]),
    Case("class_annotations_only",
         "def f():\n    class C:\n        x: int\n    return list(C.__annotations__)"),
    Case("class_dataclass",
         "import dataclasses\n"
         "def f(a):\n    @dataclasses.dataclass\n    class P:\n        x: int = 0\n"
         "        y: list = dataclasses.field(default_factory=list)\n    return repr(P(a)), repr(P()), P(a) == P(a)",
         ["(3,)"]),
    Case("class_dataclass_frozen",
         "from dataclasses import dataclass\n"
         "def f(a):\n    @dataclass(frozen=True)\n    class P:\n        'A point.'\n        x: int\n        y: int = 2\n"
         "    p = P(a)\n    return p.x + p.y, P.__doc__", ["(3,)"]),
    # The compiler stores ``__qualname__`` itself first; the source may store it again.
    Case("class_qualname_assignment",
         "def f():\n    class D:\n        __qualname__ = 'D'\n        __module__ = 'elsewhere'\n"
         "    return D.__qualname__, D.__module__"),
    # Starred bases or ``**`` keywords make ``__build_class__`` a CALL_FUNCTION_EX.
    Case("class_starred_bases_keywords",
         "class Meta(type):\n    def __new__(m, name, bases, ns, **kw):\n        ns['kw'] = sorted(kw)\n"
         "        return super().__new__(m, name, (), ns)\n"
         "def f(d):\n    class A(object, *[int, str], metaclass=Meta, **d, foo='bar'):\n        pass\n    return A.kw",
         ["({'x': 1},)"]),
    Case("class_starred_bases",
         "def f(bases):\n    class A(*bases):\n        k = 1\n    class B(*bases, int):\n        pass\n"
         "    return A.__mro__[1:], B.__mro__[1:]", ["((dict,),)", "((),)"]),
    Case("class_keyword_dict",
         "class Base:\n    def __init_subclass__(cls, **kw):\n        cls.kw = kw\n"
         "def f(d):\n    class A(Base, **d):\n        pass\n    class B(Base, **{'k': 1}):\n        pass\n"
         "    return A.kw, B.kw", ["({'x': 1},)"]),
    # 3.12+: a generic definition is made by a function of its own.
    Case("class_generic",
         "def f(a):\n    class C[T]:\n        x = a\n    def g[T](x: T) -> T:\n        return x\n"
         "    type Alias = list[int]\n    return C.__type_params__[0].__name__, g(a), Alias.__value__",
         ["(1,)"], since=(3, 12)),
    Case("class_generic_bounds",
         "def f(a):\n    class C[T: int, *Ts, **P](list, metaclass=type):\n        x = a\n"
         "    def g[T: (int, str), U](x: T = 1, *, y: U = a) -> T:\n        return x + y\n"
         "    type A[K] = dict[K, a]\n"
         "    return [p.__name__ for p in C.__type_params__], C.__mro__[1:], g(2), g(), repr(A.__value__)",
         ["(1,)"], since=(3, 12)),
    Case("class_generic_decorated",
         "def dec(x):\n    return x\n"
         "def f(a, bases):\n    @dec\n    class C[T](*bases, **a):\n        y: T\n"
         "    @dec\n    def g[T, *Ts](*args: T) -> T:\n        return args\n"
         "    async def h[T](x: T):\n        return x\n    return list(C.__annotations__), g(1, 2), h.__name__",
         ["({}, ())"], since=(3, 12)),
    Case("class_generic_defaults",
         "def f():\n    class D[T = int, **P = [int]]:\n        pass\n    type A[K: str = str] = list[K]\n"
         "    return [p.__default__ for p in D.__type_params__], A.__type_params__[0].__bound__",
         since=(3, 13)),
]
