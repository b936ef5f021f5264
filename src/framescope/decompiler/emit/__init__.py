"""Pass 5: the recovered ``ast`` → source text.

``cleanup`` undoes compiler idioms (implicit returns, asserts, comprehensions, class
bodies); ``unparse`` prints the tree with each operator's precedence.
"""
