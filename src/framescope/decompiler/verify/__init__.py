"""The check: recompile decompiled source and compare its bytecode with the original's.

``equivalence`` compares the two instruction graphs (a bisimulation).
"""
