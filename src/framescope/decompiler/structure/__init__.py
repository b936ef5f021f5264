"""Pass 4: basic blocks → statements: if/elif/else, loops, try, with, match.

``statements`` walks the graph and recovers each statement, with ``conditions`` (boolean
operators and conditional expressions), ``loops``, ``protected`` (try and with) and
``patterns`` (match/case, read from their bytecode).
"""
