"""What the tests share: program generators, an assembler, a DAP client and a pdb driver."""
