"""Pass 2: canonical instructions → a control-flow graph of basic blocks.

``cfg`` builds the blocks and their dominator trees; ``normalize`` undoes the compiler's
layout tricks (rotated loops, copied exits); ``handlers`` classifies exception handlers.
"""
