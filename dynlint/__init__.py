"""dynlint: find, fix and confirm dynamic shapes in PyTorch code.

The package root stays import-light: no torch, no libcst.
"""

__version__ = "0.1.0"
