"""Writing results: atomically, so that a failed run leaves no half-written output behind.

Every file privgraph writes (graphs, models, synthetic data, result tables) goes through
:func:`write_atomically`: the content is written to a temporary file beside the target and
renamed over it only once complete.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_atomically(path: str | os.PathLike, write: Callable[[str], object]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it to ``path``.

    On any error the temporary file is removed and the error propagates; ``path`` is
    untouched (an older file there stays as it was). A missing directory is an error
    that names it.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "x.txt"
    >>> write_atomically(out, lambda tmp: Path(tmp).write_text("ok")).read_text()
    'ok'
    >>> def fail(tmp):
    ...     raise RuntimeError("disk full")
    >>> write_atomically(out, fail)
    Traceback (most recent call last):
    ...
    RuntimeError: disk full
    >>> out.read_text(), sorted(p.name for p in out.parent.iterdir())
    ('ok', ['x.txt'])
    """
    target = Path(path)
    if not target.parent.is_dir():
        raise FileNotFoundError(f"cannot write {str(target)!r}: directory {str(target.parent)!r} does not exist")
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
