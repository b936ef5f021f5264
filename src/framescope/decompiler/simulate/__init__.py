"""Pass 3: straight-line instructions → ``ast`` expressions and statements.

``simulator`` runs the stack machine symbolically, one method per operation; ``values``
holds the values it pushes that are not yet expressions; ``signature`` reads a function's
parameters; ``sametree`` compares syntax trees.
"""
