"""The "no data-dependent refusal" audit: every command, on neighbouring files at each boundary.

A check, refusal, warning or early exit that reads the data leaks with probability one: run
on a file it accepts and on a neighbour it refuses, the command tells the two apart with
certainty (an infinite epsilon), whatever noise the rest of the run adds. So each case here
builds two neighbouring files that sit on one such boundary (a column made constant by one
record, a value outside the domain, a missing value, ties filling a quarter of a column, one
row more) and runs one command on both, with the same public inputs (domain codebook, flags,
seed). The behaviour must be identical: the same exit status, the same kind of error if any,
the same output files, and the same printed text once released numbers are masked.

The cases cover every command that reads a user's data (``discover``, ``fit-mrf``,
``direction``), both neighbouring relations where a command offers both, and the refusal a
missing domain causes (it must not depend on the file's content either).
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_MARKERS = re.compile(r"NOT PRIVATE|NOT private|[Ww]arning|[Rr]efus\w*|[Ee]rror|constant|tied|missing|outside")


@dataclass(frozen=True)
class RefusalCase:
    """One command run on a pair of neighbouring files that sit on one check's boundary."""

    name: str
    command: str
    relation: str
    boundary: str
    make_pair: Callable[[Path], tuple[Path, Path]]
    args: Callable[[Path, Path], list[str]]  # (data file, folder) -> the rest of the command line
    outputs: Sequence[str] = ()
    takes_data: bool = True  # False: the command reads no data file (plan); it runs beside each file alike
    #: A context manager (made fresh per case) both runs go inside: a public limit lowered so
    #: that cheap neighbours sit on its boundary (:func:`_distinct_rows_capped`).
    within: Callable[[], contextlib.AbstractContextManager] | None = None
    #: A regex of public numbers (n under replace-one): its matches in the printed output and in
    #: the output files' text must be identical on both sides, unmasked (:data:`PUBLIC_N`).
    public: str | None = None


@dataclass(frozen=True)
class RefusalResult:
    case: RefusalCase
    same: bool
    left: str
    right: str


def run_case(case: RefusalCase) -> RefusalResult:
    """Run the case's command on both files (in-process) and compare what a user would see."""
    from typer.testing import CliRunner

    from privgraph.cli import app

    with tempfile.TemporaryDirectory() as folder, (case.within or contextlib.nullcontext)():
        root = Path(folder)
        seen = []
        for side, data in zip(("left", "right"), case.make_pair(root)):
            out_dir = root / side
            out_dir.mkdir()
            command = case.command.split() + ([str(data)] if case.takes_data else [])
            result = CliRunner().invoke(app, [*command, *case.args(data, out_dir)], env={"COLUMNS": "200"})
            seen.append(_behaviour(result, out_dir, data) + (_public_numbers(case.public, result, out_dir),))
    compared = [s[1:-2] + s[-1:] for s in seen]  # all but the summary and the raw text shown
    same = compared[0] == compared[1] and not any(_shows_a_record(s[-2]) for s in seen)
    shown = [s[0] + (f", public {s[-1]}" if case.public else "") for s in seen]
    return RefusalResult(case, same, *shown)


#: A token only the malformed records hold: a command that prints it shows a record's text.
MARKER = "zqxj"


#: The public n of a replace-one run, as the commands print and write it: discover's ``n=``,
#: fit-mrf's privacy units, the rows of direction's results and of ``domain --check``, and
#: ``n_rows_public`` in release's ledger.json (and its other JSON files).
PUBLIC_N = r'\bn=\d+|from \d+ privacy units|"rows": \d+|\(\d+ rows|"n_rows_public": \d+'


def _public_numbers(pattern: str | None, result, out_dir: Path) -> tuple:
    """Every match of ``pattern`` in the printed output, then in each output file that is text
    (UTF-8: an image's bytes are skipped, where noise could spell a match)."""
    if pattern is None:
        return ()
    texts = [result.output]
    for path in sorted(p for p in out_dir.iterdir() if p.is_file()):
        try:
            texts.append(path.read_text())
        except UnicodeDecodeError:
            continue
    return tuple(tuple(re.findall(pattern, text)) for text in texts)


def _shows_a_record(shown: str) -> bool:
    return MARKER in shown.lower()


def _behaviour(result, out_dir: Path, data: Path) -> tuple:
    """(summary, exit status, error type and message, files written, warnings printed).

    The released result itself (edges, noisy numbers) may differ between neighbours; that
    is what the noise is for. Everything else a user sees must not.
    """
    error = type(result.exception).__name__ if result.exception and not isinstance(result.exception, SystemExit) else ""
    message = _NUMBER.sub("#", str(result.exception).replace(str(data), "DATA")) if error else ""
    files = tuple(sorted(p.name for p in out_dir.iterdir()))
    text = (message,) + tuple(sorted(set(_MARKERS.findall(result.output))))
    summary = f"exit {result.exit_code}" + (f", {error}: {str(result.exception)[:60]}" if error else "") + \
        (f", wrote {', '.join(files)}" if files else "")
    shown = result.output + (str(result.exception) if result.exception else "")
    return summary, result.exit_code, error, files, text, shown


# --- neighbouring files -------------------------------------------------------------


def _table(n: int = 1000, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    a = rng.choice(["no", "yes"], n)
    b = np.where(a == "yes", rng.integers(2, 4, n), rng.integers(1, 3, n))
    return {"a": list(a), "b": [int(v) for v in b], "c": ["x"] * n}


def _write(path: Path, columns: dict) -> Path:
    import pandas as pd

    pd.DataFrame(columns).to_csv(path, index=False)
    return path


def _codebook(folder: Path) -> Path:
    from privgraph.data import Domain, Kind, write_codebook

    domain = Domain(("a", "b", "c"), (2, 3, 2), (Kind.CATEGORICAL, Kind.ORDINAL, Kind.CATEGORICAL),
                    (("no", "yes"), (1, 2, 3), ("x", "y")))
    return write_codebook(domain, folder / "domain.json")


def _replaced(column: str, value, n: int = 1000):
    """D: column ``c`` holds ``y`` in one record; D': that record's ``column`` set to ``value``."""
    def make(folder: Path) -> tuple[Path, Path]:
        left = _table(n)
        left["c"][0] = "y"
        right = {k: list(v) for k, v in left.items()}
        right[column][0] = value
        if column != "c":
            right["c"][0] = "x"
        return _write(_side(folder, 0) / "d.csv", left), _write(_side(folder, 1) / "d.csv", right)
    return make


def _one_more_row(n: int = 100):
    """D and D plus one record (add/remove neighbours)."""
    def make(folder: Path) -> tuple[Path, Path]:
        full = _table(n + 1)
        return (_write(_side(folder, 0) / "d.csv", {k: v[:n] for k, v in full.items()}),
                _write(_side(folder, 1) / "d.csv", full))
    return make


def _pair_with_ties(n: int = 400, ties: int = 99):
    """(x, y) continuous, one file with ``ties`` copies of the most common x, the other ``ties + 1``."""
    def make(folder: Path) -> tuple[Path, Path]:
        rng = np.random.default_rng(0)
        x = rng.uniform(-2, 2, n)
        x[:ties] = 0.5
        y = np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, n)
        x2 = x.copy()
        x2[ties] = 0.5
        return _write(_side(folder, 0) / "p.csv", {"x": x, "y": y}), _write(_side(folder, 1) / "p.csv", {"x": x2, "y": y})
    return make


def _pair_replaced(value: float, n: int = 400):
    """(x, y) continuous; the neighbour has one x replaced by ``value`` (NaN, or a constant column)."""
    def make(folder: Path) -> tuple[Path, Path]:
        rng = np.random.default_rng(1)
        x = rng.uniform(-2, 2, n)
        y = np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, n)
        x2 = x.copy()
        x2[0] = value
        return _write(_side(folder, 0) / "p.csv", {"x": x, "y": y}), _write(_side(folder, 1) / "p.csv", {"x": x2, "y": y})
    return make


#: One malformed line of each kind (each holds :data:`MARKER`, which must never be printed).
MALFORMED_LINES = {
    "extra field": b"no,2,x,zqxj",
    "short row": b"zqxj,2",
    "bad byte": b"no,zqxj\xff,x",
    "stray quote": b'no,2",zqxj',
    "unterminated quote": b'"no,2,zqxj',
}


#: One record whose value is text with hard characters (each holds :data:`MARKER`): a value
#: outside the domain, which must change nothing but that record's code. Their UTF-8 bytes
#: include 0x80-0x9F, which stopped DuckDB's former Latin-1 scan with an error.
HARD_TEXT_LINES = {
    "euro and sharp s": "no,2,zqxj€ß".encode(),
    "emoji with a joiner": "zqxj👩\u200d💻,2,x".encode(),
    "NEL, line separator and BOM": "no,zqxj\u0085\u2028\ufeff,x".encode(),
}


def _malformed(line: bytes, n: int = 1000):
    """D, and D with one malformed line among its records (neighbours under either relation)."""
    def make(folder: Path) -> tuple[Path, Path]:
        left = _write(_side(folder, 0) / "d.csv", _table(n))
        lines = left.read_bytes().splitlines()
        right = _side(folder, 1) / "d.csv"
        right.write_bytes(b"\n".join(lines[:n // 2] + [line] + lines[n // 2:]) + b"\n")
        return left, right
    return make


def _with_bom(n: int = 1000):
    """The same records, the file without and with a UTF-8 byte-order mark."""
    def make(folder: Path) -> tuple[Path, Path]:
        left = _write(_side(folder, 0) / "d.csv", _table(n))
        right = _side(folder, 1) / "d.csv"
        right.write_bytes(b"\xef\xbb\xbf" + left.read_bytes())
        return left, right
    return make


def _side(folder: Path, i: int) -> Path:
    """The folder of one neighbour's file (both files get the same name)."""
    path = folder / f"input{i}"
    path.mkdir(exist_ok=True)
    return path


def _pair_codebook(folder: Path) -> Path:
    from privgraph.data import Domain, Kind, write_codebook

    domain = Domain(("x", "y"), (0, 0), (Kind.CONTINUOUS, Kind.CONTINUOUS), ((), ()), ((-3.0, 3.0), (-3.0, 3.0)))
    return write_codebook(domain, folder / "pair.json")


#: A binned continuous column's public bounds and edges (:func:`_binned_codebook`).
BINNED_EDGES = (0.0, 2.5, 5.0, 7.5, 10.0)


def _binned_table(n: int = 1000, seed: int = 0) -> dict:
    """``_table`` with a continuous column ``x`` (bins :data:`BINNED_EDGES`) that depends on ``a``."""
    rng = np.random.default_rng(seed)
    columns = _table(n, seed)
    yes = np.asarray(columns["a"]) == "yes"
    columns["x"] = [repr(float(v)) for v in np.clip(np.where(yes, 6.5, 3.5) + rng.normal(0, 1.5, n), 0.5, 9.5)]
    return columns


def _binned_codebook(folder: Path) -> Path:
    from privgraph.data import Domain, Kind, edges_bins, write_codebook

    domain = Domain(("a", "b", "c", "x"), (2, 3, 2, 4), (Kind.CATEGORICAL, Kind.ORDINAL, Kind.CATEGORICAL,
                    Kind.CONTINUOUS), (("no", "yes"), (1, 2, 3), ("x", "y"), ()),
                    bins=(None, None, None, edges_bins(BINNED_EDGES)))
    return write_codebook(domain, folder / "domain.json")


def _binned_replaced(left_value: str, right_value: str, n: int = 1000):
    """D: one record's ``x`` is ``left_value``; D': the same record's ``x`` is ``right_value``."""
    def make(folder: Path) -> tuple[Path, Path]:
        left = _binned_table(n)
        left["x"][0] = left_value
        right = {k: list(v) for k, v in left.items()}
        right["x"][0] = right_value
        return _write(_side(folder, 0) / "d.csv", left), _write(_side(folder, 1) / "d.csv", right)
    return make


#: The boundaries of a binned column: at the upper bound vs just beyond it, at an inner edge vs
#: just below it, below the lower bound, and a value that is no number.
BINNED_PAIRS = {
    "at the bound vs beyond it": ("10.0", "10.000001"),
    "at an edge vs just below it": ("5.0", "4.999999"),
    "at the lower bound vs far below it": ("0.0", "-1e9"),
    "a number vs a non-number": ("5.0", "n/a"),
    "a number vs a missing value": ("5.0", ""),
}


@contextlib.contextmanager
def _distinct_rows_capped(limit: int):
    """Every distinct-rows query of a file answers as if its cap were at most ``limit`` (None
    past it), so neighbours with ``limit`` and ``limit + 1`` distinct rows sit on any such cap."""
    from privgraph.data.engines.duckdb_engine import DuckDBEngine

    fetch = DuckDBEngine.distinct_rows
    DuckDBEngine.distinct_rows = lambda self, max_rows: fetch(self, min(max_rows, limit))
    try:
        yield
    finally:
        DuckDBEngine.distinct_rows = fetch


def _discover(folder_args=(), codebook=None):
    def args(data: Path, out: Path) -> list[str]:
        return ["--domain", str((codebook or _codebook)(data.parent)), "--epsilon", "20", "--method", "laplace-pc",
                "--seed", "0", "--out", str(out / "g.json"), *folder_args]
    return args


def _discover_fisher_z(neighbours: str):
    """discover with the Fisher-z test on the continuous pair (one covariance release)."""
    def args(data: Path, out: Path) -> list[str]:
        return ["--domain", str(_pair_codebook(data.parent)), "--ci-test", "fisher-z", "--epsilon", "1",
                "--neighbours", neighbours, "--seed", "0", "--out", str(out / "g.json")]
    return args


def _pair_one_more_row(n: int = 400):
    """The continuous pair, and the same plus one record (add/remove neighbours)."""
    def make(folder: Path) -> tuple[Path, Path]:
        left, _ = _pair_replaced(0.0, n)(folder)
        right = _side(folder, 1) / "p.csv"
        right.write_bytes(left.read_bytes() + b"0.25,0.5\n")
        return left, right
    return make


def _fit_mrf(neighbours: str, codebook=None, cliques: str = "a,b;b,c"):
    def args(data: Path, out: Path) -> list[str]:
        return ["--domain", str((codebook or _codebook)(data.parent)), "--cliques", cliques, "--epsilon", "1",
                "--neighbours", neighbours, "--seed", "0", "--out", str(out / "m.json")]
    return args


def _direction(data: Path, out: Path) -> list[str]:
    return ["--domain", str(_pair_codebook(data.parent)), "--x", "x", "--y", "y", "--epsilon", "1", "--seed", "0",
            "--out", str(out / "r.json")]


def _release(neighbours: str, codebook=None):
    def args(data: Path, out: Path) -> list[str]:
        return ["--domain", str((codebook or _codebook)(data.parent)), "--epsilon", "1", "--structure", "tree",
                "--neighbours", neighbours, "--seed", "0", "--out", str(out)]
    return args


def _plan(data: Path, out: Path, codebook=None) -> list[str]:
    return ["--domain", str((codebook or _codebook)(data.parent)), "--rows", "1000", "--epsilon", "1"]


def _domain_check(data: Path, out: Path, codebook=None) -> list[str]:
    return ["--check", str((codebook or _codebook)(data.parent))]


def _no_domain(command: str):
    def args(data: Path, out: Path) -> list[str]:
        base = {"discover": ["--epsilon", "1"], "fit-mrf": ["--cliques", "a,b", "--epsilon", "1"],
                "direction": ["--x", "x", "--y", "y", "--epsilon", "1"]}[command]
        return [*base, "--seed", "0"]
    return args


def refusal_cases() -> tuple[RefusalCase, ...]:
    """Every command on each boundary its old checks sat on."""
    return (
        RefusalCase("discover_constant", "discover", "replace-one", "a column made constant by one record",
                    _replaced("c", "x"), _discover()),
        RefusalCase("discover_out_of_domain", "discover", "replace-one", "a value outside the domain",
                    _replaced("a", "maybe"), _discover()),
        RefusalCase("discover_missing", "discover", "replace-one", "a missing value",
                    _replaced("b", ""), _discover()),
        RefusalCase("discover_direction_distinct_rows", "discover", "replace-one",
                    "--orient direction on 5 vs 4 distinct rows, every distinct-rows cap lowered to 4",
                    _replaced("c", "x"), _discover(("--orient", "direction")), within=lambda: _distinct_rows_capped(4)),
        RefusalCase("fit_mrf_one_more_row", "fit-mrf", "add/remove", "100 vs 101 rows (n is private)",
                    _one_more_row(), _fit_mrf("add_remove")),
        RefusalCase("fit_mrf_constant", "fit-mrf", "replace-one", "a column made constant by one record",
                    _replaced("c", "x"), _fit_mrf("replace_one")),
        RefusalCase("fit_mrf_out_of_domain", "fit-mrf", "add/remove", "a value outside the domain",
                    _replaced("b", "7"), _fit_mrf("add_remove")),
        RefusalCase("direction_ties", "direction", "replace-one", "ties filling a quarter of a column",
                    _pair_with_ties(), _direction),
        RefusalCase("direction_missing", "direction", "replace-one", "a missing value",
                    _pair_replaced(float("nan")), _direction),
        RefusalCase("direction_out_of_bounds", "direction", "replace-one", "a value outside the bounds",
                    _pair_replaced(1e6), _direction),
        RefusalCase("discover_fisher_z_missing", "discover", "replace-one", "a missing value (Fisher-z covariance)",
                    _pair_replaced(float("nan")), _discover_fisher_z("replace_one")),
        RefusalCase("discover_fisher_z_out_of_bounds", "discover", "replace-one",
                    "a value outside the bounds (Fisher-z covariance)", _pair_replaced(1e6),
                    _discover_fisher_z("replace_one")),
        RefusalCase("discover_fisher_z_at_bound", "discover", "add/remove",
                    "a value on the bound, under add/remove (Fisher-z covariance)", _pair_replaced(3.0),
                    _discover_fisher_z("add_remove")),
        RefusalCase("discover_fisher_z_one_more_row", "discover", "add/remove",
                    "400 vs 401 rows (n is private; released with the covariance)", _pair_one_more_row(),
                    _discover_fisher_z("add_remove")),
        RefusalCase("no_domain_discover", "discover", "any", "no domain: refused whatever the file holds",
                    _replaced("c", "x"), _no_domain("discover")),
        RefusalCase("no_domain_fit_mrf", "fit-mrf", "any", "no domain: refused whatever the file holds",
                    _one_more_row(), _no_domain("fit-mrf")),
        RefusalCase("no_domain_direction", "direction", "any", "no domain: refused whatever the file holds",
                    _pair_with_ties(), _no_domain("direction")),
        RefusalCase("release_out_of_domain", "release", "add/remove", "a value outside the domain",
                    _replaced("a", "maybe"), _release("add_remove")),
        RefusalCase("release_one_more_row", "release", "add/remove", "100 vs 101 rows (n is private)",
                    _one_more_row(), _release("add_remove")),
        *_malformed_cases(),
        *_binned_cases(),
        *_pair_column_cases(),
        *_over_long_cases(),
        *_person_cases(),
    )


def _binned_cases() -> tuple[RefusalCase, ...]:
    """Every command that reads a file, on neighbours at each boundary of a binned continuous
    column (clipping is a fixed map, a non-number an invalid value: neither may show)."""
    b = _binned_codebook
    commands = (("discover", "replace-one", _discover(codebook=b)),
                ("fit-mrf", "add/remove", _fit_mrf("add_remove", b, "x,a;a,b")),
                ("fit-mrf", "replace-one", _fit_mrf("replace_one", b, "x,a;a,b")),
                ("release", "add/remove", _release("add_remove", b)),
                ("release", "replace-one", _release("replace_one", b)),
                ("domain", "owner's tool", lambda data, out: _domain_check(data, out, b)))
    chosen = ((0, "at the bound vs beyond it"), (0, "a number vs a non-number"), (1, "a number vs a non-number"),
              (1, "a number vs a missing value"), (2, "at the bound vs beyond it"), (3, "a number vs a non-number"),
              (4, "at an edge vs just below it"), (4, "at the lower bound vs far below it"),
              (5, "a number vs a non-number"))  # a few per command: the quick audit runs them all
    cases = []
    for i, kind in chosen:
        command, relation, args = commands[i]
        cases.append(RefusalCase(f"{command.replace('-', '_')}_{relation.split('-')[0].split('/')[0].split(chr(39))[0]}"
                                 f"_binned_{kind.replace(' ', '_')}", command, relation, f"a binned column: {kind}",
                                 _binned_replaced(*BINNED_PAIRS[kind]), args))
    cases.append(RefusalCase("plan_binned", "plan", "any", "plan beside a binned column's neighbours",
                             _binned_replaced(*BINNED_PAIRS["a number vs a non-number"]),
                             lambda data, out: _plan(data, out, b), takes_data=False))
    return tuple(cases)


def _malformed_cases() -> tuple[RefusalCase, ...]:
    """Every command that reads a file, on D and D with one malformed line (and with a BOM), or
    with one record of hard characters (:data:`HARD_TEXT_LINES`)."""
    commands = (("discover", "replace-one", _discover()), ("fit-mrf", "add/remove", _fit_mrf("add_remove")),
                ("fit-mrf", "replace-one", _fit_mrf("replace_one")), ("release", "add/remove", _release("add_remove")),
                ("release", "replace-one", _release("replace_one")), ("domain", "owner's tool", _domain_check))
    cases = [RefusalCase(f"{command.replace('-', '_')}_{relation.split('-')[0].split('/')[0]}_{kind.replace(' ', '_')}",
                         command, relation, f"one malformed line ({kind})", _malformed(line), args)
             for command, relation, args in commands for kind, line in MALFORMED_LINES.items()]
    cases += [RefusalCase(f"{command.replace('-', '_')}_bom", command, relation, "a byte-order mark before the header",
                          _with_bom(), args) for command, relation, args in commands[:1] + commands[3:4]]
    cases += [RefusalCase(f"direction_{kind.replace(' ', '_')}", "direction", "replace-one",
                          f"one malformed line ({kind})", _malformed_pair(line), _direction)
              for kind, line in MALFORMED_LINES.items()]
    cases += [RefusalCase(f"{command.replace('-', '_')}_{relation.split('-')[0].split('/')[0]}_{kind.replace(' ', '_')}",
                          command, relation, f"one value of hard characters ({kind})", _malformed(line), args)
              for command, relation, args in commands for kind, line in HARD_TEXT_LINES.items()]
    cases += [RefusalCase(f"direction_{kind.replace(' ', '_')}", "direction", "replace-one",
                          f"one value of hard characters ({kind})", _malformed_pair(line), _direction)
              for kind, line in HARD_TEXT_LINES.items()]
    cases.append(RefusalCase("plan_reads_no_data", "plan", "any", "plan beside a file and its malformed neighbour",
                             _malformed(MALFORMED_LINES["extra field"]), _plan, takes_data=False))
    return tuple(cases)


def _malformed_pair(line: bytes):
    """A continuous pair, and the same pair with one malformed line."""
    def make(folder: Path) -> tuple[Path, Path]:
        left, _ = _pair_replaced(0.0)(folder)
        lines = left.read_bytes().splitlines()
        right = _side(folder, 1) / "p.csv"
        right.write_bytes(b"\n".join(lines[:200] + [line] + lines[200:]) + b"\n")
        return left, right
    return make


def _long_pairs(n: int = 400):
    """A long table (pair, x, y) of pairs p0 and p1; the neighbour has one record of p1 whose
    pair value is a token outside the codebook's levels (it holds :data:`MARKER`)."""
    def make(folder: Path) -> tuple[Path, Path]:
        left, _ = _pair_replaced(0.0, 2 * n)(folder)
        lines = left.read_bytes().decode().splitlines()
        pairs = ["pair"] + ["p0"] * n + ["p1"] * n
        right_pairs = [*pairs[:n + 1], f"alice_secret_{MARKER}", *pairs[n + 2:]]
        files = []
        for i, column in enumerate((pairs, right_pairs)):
            path = _side(folder, i) / "p.csv"
            path.write_text("".join(f"{p},{line}\n" for p, line in zip(column, lines)))
            files.append(path)
        return files[0], files[1]
    return make


def _direction_pairs(is_public: bool):
    """direction --pair-column pair, the codebook's pair column (levels p0, p1 and an empty
    p2) declared public or not."""
    def args(data: Path, out: Path) -> list[str]:
        import json

        codebook = json.loads(_pair_codebook(data.parent).read_text())
        codebook["columns"].append({"name": "pair", "kind": "nominal", "levels": ["p0", "p1", "p2"]}
                                   | ({"public": True} if is_public else {}))
        (data.parent / "pairs.json").write_text(json.dumps(codebook))
        return ["--domain", str(data.parent / "pairs.json"), "--pair-column", "pair", "--x", "x", "--y", "y",
                "--epsilon", "1", "--seed", "0", "--out", str(out / "r.json")]
    return args


def _pair_column_cases() -> tuple[RefusalCase, ...]:
    """direction on a long table whose one record's pair value is replaced by one outside the
    levels. Undeclared, the pair sizes are private (replace-one moves a record between pairs):
    refused before any data is read. Declared public, the pair values are public knowledge and
    the two files are not neighbours under the guarantee (their public pair sizes differ by
    one); what must still hold is that the value outside the levels is recoded by the
    relation's fixed policy, never shown, and the pairs are the codebook's levels on both."""
    return (RefusalCase("direction_pair_column_undeclared", "direction", "replace-one",
                        "a pair value outside the levels, pair column not declared public", _long_pairs(),
                        _direction_pairs(False)),
            RefusalCase("direction_pair_column_public", "direction", "replace-one",
                        "a pair value outside the levels, pair column declared public", _long_pairs(),
                        _direction_pairs(True)))


#: A line over 4 MiB (:data:`privgraph.data.long_lines.MAX_LINE_BYTES`): an invalid record.
OVER_LONG = MARKER.encode() * ((1 << 20) + 1)


def _over_long(make_pair: Callable[[Path], tuple[Path, Path]], prefix: bytes):
    """D (the left file of ``make_pair``), and D with its middle record's line replaced by one
    over 4 MiB (``prefix`` then :data:`OVER_LONG`): replace-one neighbours, n the same."""
    def make(folder: Path) -> tuple[Path, Path]:
        left, _ = make_pair(folder)
        lines = left.read_bytes().splitlines()
        middle = len(lines) // 2
        right = _side(folder, 1) / left.name
        right.write_bytes(b"\n".join(lines[:middle] + [prefix + OVER_LONG] + lines[middle + 1:]) + b"\n")
        return left, right
    return make


def _over_long_cases() -> tuple[RefusalCase, ...]:
    """Every command that prints or writes the public n, on 2000 records and the same with one
    record's line over 4 MiB: an invalid record like any other, so n must be equal, unmasked."""
    table, pair = _over_long(_replaced("c", "x", 2000), b"no,2,"), _over_long(_pair_replaced(0.0, 2000), b"0.5,")
    commands = (("discover", table, _discover()), ("discover_fisher_z", pair, _discover_fisher_z("replace_one")),
                ("direction", pair, _direction), ("fit_mrf", table, _fit_mrf("replace_one")),
                ("release", table, _release("replace_one")), ("domain", table, _domain_check))
    return tuple(RefusalCase(f"{name}_over_long_line", name.split("_fisher")[0].replace("_", "-"),
                             "owner's tool" if name == "domain" else "replace-one",
                             "one record's line over 4 MiB (public n compared)", make, args, public=PUBLIC_N)
                 for name, make, args in commands)


#: The bound on each person's rows of the person cases (``--max-rows-per-person``).
PERSON_K = 3


def _with_person(codebook):
    """``codebook`` (a function of the folder) with its top-level ``"id": "pid"``."""
    def make(folder: Path) -> Path:
        import json

        book = json.loads(codebook(folder).read_text()) | {"id": "pid"}
        path = folder / "persons.json"
        path.write_text(json.dumps(book))
        return path
    return make


def _persons(columns: dict, n: int) -> dict:
    """``columns`` with a person column: two rows per person (p0, p0, p1, p1, ...)."""
    return columns | {"pid": [f"p{i // 2}" for i in range(n)]}


def _person_history(rows: int, replaced: bool = False, pair: bool = False, n: int = 400):
    """D and D plus one person (``P``) with ``rows`` rows (person add/remove); ``replaced``: P
    holds k rows on the left, and ``rows`` other rows on the right (person replace-one)."""
    def make(folder: Path) -> tuple[Path, Path]:
        import pandas as pd

        if pair:
            rng = np.random.default_rng(1)
            x = rng.uniform(-2, 2, n)
            base = _persons({"x": list(x), "y": list(np.tanh(2 * x) + 0.3 * rng.uniform(-1, 1, n))}, n)
            mine, theirs = {"x": 0.5, "y": -0.5}, {"x": -1.0, "y": 1.0}
        else:
            base = _persons(_table(n), n)
            mine, theirs = {"a": "yes", "b": 1, "c": "y"}, {"a": "no", "b": 3, "c": "x"}
        frame = pd.DataFrame(base)
        person = lambda values, count: pd.DataFrame([values | {"pid": "P"}] * count)  # noqa: E731
        left = pd.concat([frame, person(theirs, PERSON_K)]) if replaced else frame
        right = pd.concat([frame, person(mine, rows)])
        name = "p.csv" if pair else "d.csv"
        left.to_csv(_side(folder, 0) / name, index=False)
        right.to_csv(_side(folder, 1) / name, index=False)
        return _side(folder, 0) / name, _side(folder, 1) / name
    return make


def _per_person(args, relation: str, codebook=None):
    """A command's arguments with the codebook naming the person (``"id"``), the bound k and
    ``relation`` (the ``--neighbours`` of the command line)."""
    def with_unit(data: Path, out: Path) -> list[str]:
        given = args(data, out)
        book = str(_with_person(codebook or _codebook)(data.parent))
        i = given.index("--domain")
        given = given[:i + 1] + [book] + given[i + 2:]
        if "--neighbours" in given:
            j = given.index("--neighbours")
            given = given[:j] + given[j + 2:]
        return [*given, "--neighbours", relation, "--max-rows-per-person", str(PERSON_K)]
    return with_unit


def _person_cases() -> tuple[RefusalCase, ...]:
    """Every command with the person as the unit (the codebook's ``"id"``, ``--max-rows-per-person
    3``), on neighbours that differ by one person's whole history: k rows added, k + 3 rows
    added (the truncation must absorb them), and under replace-one k rows replaced by k + 3.
    Nothing a user sees may depend on how many rows the person has, nor on the number of rows."""
    discover = lambda data, out: ["--domain", "", "--epsilon", "60", "--delta", "0",  # noqa: E731
                                  "--method", "priv-pc", "--seed", "0", "--out", str(out / "g.json")]
    direction = lambda data, out: [a if a != "1" else "30" for a in _direction(data, out)]  # noqa: E731
    commands = (("discover", discover, None, False), ("fit-mrf", _fit_mrf("add_remove"), None, False),
                ("release", _release("add_remove"), None, False), ("direction", direction, _pair_codebook, True))
    histories = (("k_rows", "add_remove", dict(rows=PERSON_K)), ("more_rows", "add_remove", dict(rows=PERSON_K + 3)),
                 ("replaced", "replace_one", dict(rows=PERSON_K + 3, replaced=True)))
    cases = []
    for command, args, book, pair in commands:
        for kind, relation, history in histories:
            cases.append(RefusalCase(f"{command.replace('-', '_')}_person_{kind}", command,
                                     f"{relation.replace('_', '-')} of a person",
                                     f"one person's history ({kind.replace('_', ' ')}), at most {PERSON_K} rows each",
                                     _person_history(pair=pair, **history), _per_person(args, relation, book)))
    cases.append(RefusalCase("plan_person", "plan", "any", "plan with a person column beside a person's neighbours",
                             _person_history(PERSON_K + 3),
                             lambda data, out: ["--domain", str(_with_person(_codebook)(data.parent)), "--rows",
                                                "1000", "--epsilon", "1"], takes_data=False))
    return tuple(cases)


def audit_refusals(cases: Sequence[RefusalCase] | None = None) -> list[RefusalResult]:
    """Run every case; each result says whether both neighbours behaved the same."""
    return [run_case(case) for case in (cases or refusal_cases())]


__all__ = ["RefusalCase", "RefusalResult", "audit_refusals", "refusal_cases", "run_case"]
