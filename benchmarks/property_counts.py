"""What the property test round-trips on this interpreter, counted as the test counts it.

    python benchmarks/property_counts.py        (hypothesmith installed; run from the repository)

Prints, for hypothesmith's ``from_node`` programs of two statements or more and for 100
programs of framescope's own generator (tests/support/source_programs.py): programs drawn,
rejected by the interpreter, statements, code objects equivalent / refused, and the same for
function code alone. The test's floors (tests/decompiler/test_property.py) are checked on
these counts.
"""
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "src"))

KEYS = ["programs", "rejected", "statements", "equivalent", "refused", "functions equivalent",
        "functions refused"]


def main() -> int:
    warnings.simplefilter("ignore")
    from tests.decompiler.test_property import generated_outcomes, syntax_tree_outcomes

    generated = generated_outcomes()
    drawn = syntax_tree_outcomes()
    version = "%d.%d.%d" % sys.version_info[:3]
    for name, counts in (("from_node, 2+ statements", drawn), ("framescope's generator", generated)):
        print("| %s | %s | %s |" % (version, name, " | ".join(str(counts[key]) for key in KEYS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
