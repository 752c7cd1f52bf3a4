"""Writing results: checked before any privacy is spent, written all or nothing.

A command that spends privacy budget checks every output it was asked for with
:func:`check_outputs` *before* it fits anything, so that a bad path costs no budget and
loses no result. At the end it writes them with :func:`write_all`: every file is rendered
to a temporary file beside its target first, and only when all are complete are they
renamed over their targets, so a failed run leaves no half-written output and no partial
set of outputs behind. :func:`write_atomically` is the one-file case.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
import privgraph.heartbeat as heartbeat
from privgraph.validation import InvalidInput

Writer = Callable[[str], object]


def check_output(path: str | os.PathLike, *, flag: str, suffixes: Sequence[str] = ()) -> Path:
    """``path`` as a Path if a file can be written there, else a one-line error naming ``flag``.

    The target must not be a directory, its name must end in one of ``suffixes`` (any
    case), and its directory must exist (it is never created) and be writable
    (a file is created there and removed at once to find out).

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> check_output(d / "g.JSON", flag="--out", suffixes=(".json",)).name
    'g.JSON'
    >>> check_output(d / "g.txt", flag="--plot", suffixes=(".png", ".svg"))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --plot '...g.txt' must end in .png or .svg
    >>> check_output(d, flag="--out", suffixes=(".json",))
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --out '...' is a directory; give a file name ending in .json
    >>> check_output(d / "no" / "g.json", flag="--out", suffixes=(".json",))
    Traceback (most recent call last):
    ...
    FileNotFoundError: --out '...g.json': directory '...no' does not exist
    """
    target = Path(os.fspath(path))
    allowed = " or ".join(suffixes) if suffixes else "any suffix"
    if target.is_dir():
        raise InvalidInput(f"{flag} {str(target)!r} is a directory; give a file name ending in {allowed}")
    if suffixes and not target.name.lower().endswith(tuple(s.lower() for s in suffixes)):
        raise InvalidInput(f"{flag} {str(target)!r} must end in {allowed}")
    check_parent(target, flag)
    return target


def check_parent(target: Path, flag: str, missing_note: str = "") -> None:
    """Refuse ``target`` (an output named by ``flag``) unless its folder exists and a file can be
    created in it; ``missing_note`` follows the "does not exist" message."""
    parent = target.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else f"does not exist{missing_note}"
        raise FileNotFoundError(f"{flag} {str(target)!r}: directory {str(parent)!r} {what}")
    if (why := _unwritable(parent)) is not None:
        raise PermissionError(f"{flag} {str(target)!r}: directory {str(parent)!r} is not writable ({why})")


def _unwritable(directory: Path) -> str | None:
    """Why no file can be created in ``directory``, or None if one can: a file is created there
    and removed at once. (``os.access`` alone says yes to root on a read-only directory, and to
    anyone on file systems that refuse later, such as /sys or a read-only mount.)"""
    if not os.access(directory, os.W_OK | os.X_OK):
        return "permission denied"
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".privgraph-check-", suffix=".tmp")
    except OSError as err:
        return (err.strerror or str(err)).lower()
    os.close(fd)
    os.unlink(probe)
    return None


def check_outputs(outputs: Mapping[str, tuple[str | os.PathLike | None, Sequence[str]]], *,
                  overwrite: bool = False) -> dict[str, Path]:
    """Check every output a command was asked for, and that no two name the same file.

    ``outputs`` maps each flag to ``(path or None, allowed suffixes)``; a ``None`` path
    (the option was not given) is skipped. A file that exists already is refused unless
    ``overwrite`` (``--overwrite``). Returns the checked paths by flag.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> sorted(check_outputs({"--out": (d / "g.json", (".json",)), "--plot": (None, (".png",))}))
    ['--out']
    >>> check_outputs({"--out": (d / "r.csv", (".csv",)), "--synthetic": (d / "." / "r.csv", (".csv",))})
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --out and --synthetic both name '...r.csv'; give each output its own file
    >>> _ = (d / "g.json").write_text("{}")
    >>> check_outputs({"--out": (d / "g.json", (".json",))})
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --out '...g.json' exists already; give --overwrite to replace it
    """
    checked = {flag: check_output(path, flag=flag, suffixes=suffixes)
               for flag, (path, suffixes) in outputs.items() if path is not None}
    if not overwrite and (taken := [(f, p) for f, p in checked.items() if p.exists()]):
        flag, path = taken[0]
        raise InvalidInput(f"{flag} {str(path)!r} exists already; give --overwrite to replace it")
    seen: dict[Path, str] = {}
    for flag, path in checked.items():
        key = path.resolve()
        if key in seen:
            raise InvalidInput(f"{seen[key]} and {flag} both name {str(path)!r}; give each output its own file")
        seen[key] = flag
    return checked


def check_empty_directory(path: str | os.PathLike, *, flag: str, overwrite: bool = False) -> Path:
    """``path`` if it is an existing directory that is empty (or ``overwrite``), else a one-line error.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> check_empty_directory(d, flag="--out") == d
    True
    >>> _ = (d / "report.md").write_text("old")
    >>> check_empty_directory(d, flag="--out")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: --out '...' is not empty; give --overwrite to write over what is in it
    """
    target = Path(os.fspath(path))
    if not target.is_dir():
        raise FileNotFoundError(f"{flag} {str(target)!r} is not an existing directory")
    if not overwrite and any(target.iterdir()):
        raise InvalidInput(f"{flag} {str(target)!r} is not empty; give --overwrite to write over what is in it")
    return target


def output_directory(path: str | os.PathLike, *, flag: str, overwrite: bool = False) -> tuple[Path, bool]:
    """``(path, created)``: an existing directory that is empty (or ``overwrite``, as
    :func:`check_empty_directory`), or a missing one created now. Only the last component is
    created (its parent must be an existing, writable directory), so a mistyped parent is an
    error rather than a new tree. Pair it with :func:`removed_on_failure`.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> output_directory(d / "new", flag="--out") == (d / "new", True), (d / "new").is_dir()
    (True, True)
    >>> output_directory(d / "new", flag="--out")[1]
    False
    >>> output_directory(d / "no" / "new", flag="--out")
    Traceback (most recent call last):
    ...
    FileNotFoundError: --out '...new': directory '...no' does not exist (only the last component is created)
    """
    target = Path(os.fspath(path))
    if target.exists() or target.is_symlink():
        return check_empty_directory(target, flag=flag, overwrite=overwrite), False
    check_parent(target, flag, " (only the last component is created)")
    target.mkdir()
    return target, True


@contextlib.contextmanager
def removed_on_failure(path: str | os.PathLike, created: bool):
    """Run the block; if it raises (or exits) and ``created``, remove the directory ``path``
    that the command created, so a failed run leaves nothing behind. Only an empty directory is
    removed (:func:`write_all` leaves no temporary file behind when it fails).

    >>> import tempfile
    >>> d, created = output_directory(Path(tempfile.mkdtemp()) / "out", flag="--out")
    >>> with removed_on_failure(d, created):
    ...     raise RuntimeError("epsilon too small")
    Traceback (most recent call last):
    ...
    RuntimeError: epsilon too small
    >>> d.exists()
    False
    """
    try:
        yield
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(path)
        raise


def write_all(writers: Mapping[str | os.PathLike, Writer]) -> list[Path]:
    """Render every output to a temporary file beside its target, then rename them all.

    ``writers`` maps each target to a function ``write(tmp)`` that writes the whole file
    to the path ``tmp``. If any of them raises, every temporary file is removed, no target
    is touched (older files there stay as they were) and the error propagates. A missing
    directory is an error that names it. (The renames themselves are separate system
    calls: only a failing file system between two renames could leave a partial set.)

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> [p.name for p in write_all({d / "a.txt": lambda tmp: Path(tmp).write_text("a"),
    ...                             d / "b.txt": lambda tmp: Path(tmp).write_text("b")})]
    ['a.txt', 'b.txt']
    >>> def fail(tmp):
    ...     raise RuntimeError("disk full")
    >>> write_all({d / "a.txt": lambda tmp: Path(tmp).write_text("new"), d / "c.txt": fail})
    Traceback (most recent call last):
    ...
    RuntimeError: disk full
    >>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
    ('a', ['a.txt', 'b.txt'])
    """
    targets = [Path(os.fspath(p)) for p in writers]
    for target in targets:
        if not target.parent.is_dir():
            raise FileNotFoundError(f"cannot write {str(target)!r}: directory {str(target.parent)!r} does not exist")
    temps: list[str] = []
    try:
        for k, (target, write) in enumerate(zip(targets, writers.values()), 1):
            heartbeat.at(f"writing {target.name}, " + heartbeat.of(k, len(targets), "output"))
            try:
                fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
            except OSError as err:  # name the user's file, not the temporary one
                raise PermissionError(f"cannot write {str(target)!r}: directory {str(target.parent)!r} refuses new "
                                      f"files ({(err.strerror or str(err)).lower()})") from None
            os.close(fd)
            temps.append(tmp)
            write(tmp)
            os.chmod(tmp, 0o666 & ~_umask())
        for tmp, target in zip(temps, targets):
            os.replace(tmp, target)
    except BaseException:
        for tmp in temps:
            Path(tmp).unlink(missing_ok=True)
        raise
    return targets


def write_atomically(path: str | os.PathLike, write: Writer) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it to ``path``.

    On any error the temporary file is removed and the error propagates; ``path`` is
    untouched (an older file there stays as it was). A missing directory is an error
    that names it. The one-file case of :func:`write_all`.

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
    return write_all({path: write})[0]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
