"""Errors every layer may raise (the command line turns them into exit codes)."""

from __future__ import annotations


class UsageError(Exception):
    """A usage or configuration error: one line on stderr, exit code 2."""
