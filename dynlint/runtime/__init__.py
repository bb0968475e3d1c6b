"""Runtime side of dynlint: confirms dynamic shapes while the code runs.

Needs torch (``pip install dynlint[runtime]``); torch is imported lazily, so
``import dynlint.runtime`` itself is cheap.  Public names are resolved on first
use from the submodule that defines them.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    # issue: recompilation detector / confirm
    "detect_recompilation_auto_model": "dynlint.runtime.recompile",
    "confirm": "dynlint.runtime.confirm_session",
    # issue: data side
    "data_dynamicity": "dynlint.runtime.data",
    "const_shape_dataloader": "dynlint.runtime.data",
    "pad_last_batch": "dynlint.runtime.data",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dynlint.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
