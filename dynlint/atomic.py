"""Atomic file replacement, shared by the results cache and the fixer."""

from __future__ import annotations

import os
import tempfile


def replace_file(target: str, payload: bytes, *, mode: int = 0o644, owner: tuple[int, int] | None = None,
                 durable: bool = False) -> None:
    """Write ``payload`` to a temporary file beside ``target``, then rename it into place:
    readers see the old contents or the new, never a mix, and a crash leaves no partial file.
    ``owner`` (uid, gid) is kept where allowed; ``durable`` fsyncs before the rename."""
    directory, name = os.path.split(target)
    fd, temporary = tempfile.mkstemp(dir=directory or ".", prefix=f".{name}.", suffix=".dynlint-tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        if owner is not None and hasattr(os, "chown"):
            try:
                os.chown(temporary, *owner)
            except OSError:
                pass  # only the owner's own uid/gid are allowed without privileges
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
