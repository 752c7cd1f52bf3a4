"""The domain codebook: a public, versioned JSON description of a table's columns.

privgraph's guarantees hold *given the domain*: the column names, their kinds, the levels
of each discrete column in order, and the bounds of each continuous column. That domain
must not be read from the private data (levels read from the data reveal which values
occur, e.g. that some patient has a rare diagnosis), so every command takes it from a
codebook written in advance (``--domain domain.json``)::

    {
      "format": "privgraph-domain",
      "version": 1,
      "columns": [
        {"name": "smoker", "kind": "nominal",    "levels": ["no", "yes"]},
        {"name": "age",    "kind": "ordinal",    "levels": ["young", "adult", "old"]},
        {"name": "bmi",    "kind": "continuous", "bounds": [10, 60], "bins": 10},
        {"name": "income", "kind": "continuous", "bounds": [1, 1e6], "bins": 12, "scale": "log"},
        {"name": "dose",   "kind": "continuous", "edges": [0, 5, 10, 50]}
      ]
    }

* ``kind`` is ``nominal`` (unordered categories; ``categorical`` is accepted),
  ``ordinal`` (``levels`` in their order: codes 0, 1, ... follow it) or ``continuous``
  (``bounds`` ``[lo, hi]``: values outside are clipped to them; optional for columns a
  command does not use as continuous).
* A continuous column may carry public bins (:mod:`privgraph.data.bins`): ``"bins": k``
  equally wide bins over its bounds, ``"scale": "log"`` for bins equally wide in log space
  (``lo > 0``; default ``"linear"``), or explicit ``"edges": [e0, ..., ek]`` (strictly
  increasing; the bounds are then ``[e0, ek]``, and ``"bounds"`` if given must equal them).
  Such a column is counted through its k bins, as an ordinal column of k levels, by every
  command; with bounds only it is counted through the public default bins of its bounds
  (:func:`~privgraph.data.bins.default_bins`), and with neither the counting commands (and
  ``plan``) refuse it.
* Levels are JSON strings, numbers or booleans. A data value matches a level if it is the
  level or is written the same way (``1``, ``"1"`` and ``1.0`` all match the level ``1``).
* ``"public": true`` (optional): the column's values are public knowledge, so the guarantee
  does *not* protect them; neighbours differ in a record's other values only, and whatever
  depends on the column alone (each of its groups' size) may be released exactly. Only
  ``privgraph direction --pair-column`` uses it (it needs it: its pairs' sizes are printed),
  and its ledger then says the column is not protected; elsewhere the column is protected
  like any other. Declare it only for values everyone may know (a dataset's name, a public
  site), never for a person's attribute (:func:`~privgraph.data.domain.check_public_column`).
* ``"missing"`` (optional): how a missing value of the column is treated
  (:mod:`privgraph.data.missing`). ``"level"``, the default when the key is absent, gives the
  column one more public level, ``"(missing)"``, last in its order (a binned column: code k
  after its k bins): a missing value (empty, NULL, NaN; in a continuous column also inf) is
  counted, modelled and synthesised as that level, and written back as a missing value.
  ``"invalid"``: a missing value is an invalid value, handled like one outside the domain
  (below). A codebook written by privgraph always says which.
* ``"derived"`` (optional): the column is computed from others by a public rule, e.g.
  ``"derived": "ceil((therm_dem - therm_gop + 100) / 2)"`` (:mod:`privgraph.data.derived`:
  the grammar, and the check that every combination of the sources' levels gives one of the
  column's levels). A release never reads, counts or models it and computes it on its
  synthetic rows; the other commands read it as data.
* ``"drafted_from_data"``: present in a codebook that :func:`draft_codebook` wrote from the
  data. Such a domain is *not public* until a person has reviewed it (removed levels that
  only the data could tell, added the ones it lacks) and deleted that key; until then every
  ledger says "domain read from the data: not private".
* ``"csv"`` (optional): how a CSV file of this table is read, fixed before any data is read
  (:class:`~privgraph.data.records.Dialect`): ``{"delimiter": ";", "quote": "\"",
  "encoding": "utf-8" | "latin-1", "header": true}``; the default is RFC 4180 in UTF-8 with
  a header. Without a header the file's fields are the codebook's columns, in order.
* ``"id"`` (optional): the column naming the *person* a row belongs to, e.g. ``"id":
  "patient_id"``, when one person may have several rows: the person is then the privacy
  unit (:mod:`privgraph.privacy.person`) and every command needs the public bound
  ``--max-rows-per-person K``. The id column is not one of ``"columns"``: it is never
  counted, modelled, released or synthesised; it only groups the rows by person.

Values outside the domain (and missing values where the column has no missing level) never
raise once the domain is fixed: see :mod:`privgraph.data.frontdoor` for the policy that
handles them.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Mapping


from privgraph.data.bins import edges_bins, make_bins
from privgraph.data.derived import Rule, check_rules
from privgraph.data.domain import Domain, Kind
from privgraph.data.missing import DEFAULT_MISSING, MISSING, MISSING_LABEL, check_missing_key, missing_code, real_levels
from privgraph.data.records import Dialect
from privgraph.inputs import check_codebook_path
from privgraph.outputs import write_atomically
from privgraph.validation import InvalidInput

#: The ``format`` value and the current ``version`` of a codebook.
FORMAT, VERSION = "privgraph-domain", 1
#: Codebook kind names and the :class:`Kind` each stands for.
KIND_NAMES = {"nominal": Kind.CATEGORICAL, "categorical": Kind.CATEGORICAL,
              "ordinal": Kind.ORDINAL, "continuous": Kind.CONTINUOUS}
#: The caveat every output of a run with a domain read from the data carries.
NOT_PRIVATE_DOMAIN = "domain read from the data: not private (levels/bounds reveal which values occur)"
_DRAFT_KEY = "drafted_from_data"
#: The marker a drafted codebook puts on each continuous column whose bounds came from the data.
DRAFT_BOUNDS = "DRAFT: bounds read from the data (they reveal its extremes): replace them with public limits"


def domain_to_codebook(domain: Domain, *, drafted_from: str | None = None) -> dict:
    """The codebook (a JSON-ready dict) of ``domain``.

    >>> cb = domain_to_codebook(Domain(("a", "x"), (2, 0), (Kind.ORDINAL, Kind.CONTINUOUS),
    ...                                ((1, 2), ()), (None, (0.0, 1.0))))
    >>> cb["columns"]
    [{'name': 'a', 'kind': 'ordinal', 'missing': 'invalid', 'levels': [1, 2]}, {'name': 'x', 'kind': 'continuous', 'missing': 'invalid', 'bounds': [0.0, 1.0]}]
    >>> from privgraph.data.bins import make_bins
    >>> domain_to_codebook(Domain(("x",), (3,), (Kind.CONTINUOUS,), bins=(make_bins((1.0, 8.0), 3, "log"),)))["columns"]
    [{'name': 'x', 'kind': 'continuous', 'missing': 'invalid', 'bounds': [1.0, 8.0], 'bins': 3, 'scale': 'log'}]
    """
    columns = []
    for name, kind, levels, bounds, bins in zip(domain.names, domain.kinds, domain.levels, domain.bounds, domain.bins):
        entry: dict[str, Any] = {"name": name, "kind": "nominal" if kind is Kind.CATEGORICAL else kind.value}
        entry["missing"] = "invalid" if missing_code(levels) is None else "level"  # always said: the default is "level"
        if kind is Kind.CONTINUOUS:
            if bounds is not None:
                entry["bounds"] = [float(bounds[0]), float(bounds[1])]
            if bins is not None:
                entry.update(_bins_entry(bins))
            if bounds is not None and (drafted_from is not None or not domain.public):
                entry["description"] = DRAFT_BOUNDS
        else:
            entry["levels"] = [_json_level(v) for v in real_levels(levels)]
        if name in domain.public_columns:
            entry["public"] = True
        if rule := next((r for r in domain.derived if r.target == name), None):
            entry["derived"] = rule.text
        columns.append(entry)
    out: dict[str, Any] = {"format": FORMAT, "version": VERSION, "columns": columns}
    if domain.csv is not None and (csv := domain.csv.to_codebook()) is not None:
        out["csv"] = csv
    if drafted_from is not None or not domain.public:
        out[_DRAFT_KEY] = drafted_from or "unknown"
    return out


def domain_from_codebook(codebook: Mapping, *, source: str = "codebook") -> Domain:
    """The :class:`Domain` a codebook describes; errors name ``source`` and the column.

    >>> d = domain_from_codebook({"format": "privgraph-domain", "version": 1, "columns": [
    ...     {"name": "s", "kind": "nominal", "levels": ["no", "yes"]},
    ...     {"name": "bmi", "kind": "continuous", "bounds": [10, 60]}]})
    >>> d.names, d.sizes, d.bounds_of("bmi"), d.public, d.public_columns
    (('s', 'bmi'), (3, 0), (10.0, 60.0), True, frozenset())
    >>> d.levels[0]  # "missing": "level" by default: one more level, last
    ('no', 'yes', '(missing)')
    >>> domain_from_codebook({"format": "privgraph-domain", "version": 1, "columns": [
    ...     {"name": "site", "kind": "nominal", "levels": ["a", "b"], "public": True}]}).public_columns
    frozenset({'site'})
    >>> domain_from_codebook({"format": "privgraph-domain", "version": 1, "columns": [
    ...     {"name": "bmi", "kind": "continuous", "bounds": [10, 60], "bins": 5}]}).bins_of("bmi").edges
    (10.0, 20.0, 30.0, 40.0, 50.0, 60.0)
    >>> domain_from_codebook({"format": "privgraph-domain", "version": 1,
    ...     "columns": [{"name": "s", "kind": "ordinal"}]}, source="d.json")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: d.json: column 's' (ordinal) needs "levels": a non-empty list in order
    """
    if not isinstance(codebook, Mapping):
        raise InvalidInput(f"{source}: a codebook must be a JSON object, got {type(codebook).__name__}")
    if codebook.get("format") != FORMAT:
        raise InvalidInput(f"{source}: not a privgraph domain codebook (\"format\" must be {FORMAT!r}, "
                           f"got {codebook.get('format')!r}); draft one with `privgraph domain DATA --out FILE`")
    if codebook.get("version") != VERSION:
        raise InvalidInput(f"{source}: codebook version {codebook.get('version')!r} is not supported "
                           f"(this privgraph reads version {VERSION})")
    entries = codebook.get("columns")
    if not isinstance(entries, list) or not entries:
        raise InvalidInput(f"{source}: \"columns\" must be a non-empty list")
    specs = [_column(entry, i, source) for i, entry in enumerate(entries)]
    public = frozenset(e["name"] for e in entries if _is_public(e, source))
    names = [s[0] for s in specs]
    if dup := sorted({n for n in names if names.count(n) > 1}):
        raise InvalidInput(f"{source}: duplicate column names {dup}")
    dialect = Dialect.from_codebook(codebook.get("csv"), source, names) if "csv" in codebook else None
    codebook_person(codebook, source)
    derived = tuple(Rule.parse(e["name"], e["derived"]) for e in entries if "derived" in e)
    domain = Domain(tuple(names), tuple(s[2] for s in specs), tuple(s[1] for s in specs),
                    tuple(s[3] for s in specs), tuple(s[4] for s in specs),
                    public=_DRAFT_KEY not in codebook, csv=dialect, bins=tuple(s[5] for s in specs),
                    public_columns=public, derived=derived)
    try:
        check_rules(domain)
    except InvalidInput as err:
        raise InvalidInput(f"{source}: {err}") from None
    return domain


def codebook_person(codebook: Mapping, source: str = "codebook") -> str | None:
    """The person column a codebook names (its top-level ``"id"``), or None; it must be a
    non-empty string that is not one of the codebook's columns.

    >>> cb = {"id": "pid", "columns": [{"name": "a"}]}
    >>> codebook_person(cb), codebook_person({"columns": []})
    ('pid', None)
    >>> codebook_person({"id": "a", "columns": [{"name": "a"}]}, "d.json")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: d.json: "id": 'a' is also one of the columns: the person column is never counted or released, so list it only as "id"
    """
    if "id" not in codebook:
        return None
    person = codebook["id"]
    if not isinstance(person, str) or not person:
        raise InvalidInput(f"{source}: \"id\" must name the person column (a non-empty string), got {person!r}")
    names = [e.get("name") for e in codebook.get("columns") or () if isinstance(e, Mapping)]
    if person in names:
        raise InvalidInput(f"{source}: \"id\": {person!r} is also one of the columns: the person column is never "
                           "counted or released, so list it only as \"id\"")
    return person


def person_column(domain) -> str | None:
    """The person column of a run's ``domain`` argument: a codebook path's or dict's ``"id"``
    (:func:`codebook_person`); None for a :class:`Domain` or no domain (the row is the unit).

    >>> person_column({"format": FORMAT, "version": VERSION, "id": "pid",
    ...                "columns": [{"name": "a", "kind": "nominal", "levels": [0, 1]}]})
    'pid'
    >>> person_column(Domain.of(a=2)) is None
    True
    """
    if isinstance(domain, Mapping):
        return codebook_person(domain)
    if isinstance(domain, (str, Path)) or hasattr(domain, "__fspath__"):
        p = check_codebook_path(domain)
        try:
            return codebook_person(json.loads(p.read_text()), str(p))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise InvalidInput(f"domain codebook {str(p)!r} is not valid JSON: {err}") from None
    return None


def _is_public(entry: Mapping, source: str) -> bool:
    """Whether a (checked) column entry declares its values public (``"public": true``)."""
    value = entry.get("public", False)
    if not isinstance(value, bool):
        raise InvalidInput(f"{source}: column {entry['name']!r} has \"public\": {value!r}; expected true or false")
    return value


def _column(entry, i: int, source: str):
    if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"]:
        raise InvalidInput(f"{source}: column {i} must be an object with a non-empty \"name\"")
    name, kind_name = entry["name"], entry.get("kind")
    if kind_name not in KIND_NAMES:
        raise InvalidInput(f"{source}: column {name!r} has kind {kind_name!r}; expected one of "
                           "'nominal', 'ordinal', 'continuous'")
    kind = KIND_NAMES[kind_name]
    has_level = check_missing_key(entry.get("missing", DEFAULT_MISSING), f"{source}: column {name!r}") == "level"
    if unknown := sorted(set(entry) - {"name", "kind", "levels", "bounds", "description", "public", "missing", "derived"}
                         - set(BIN_KEYS)):
        raise InvalidInput(f"{source}: column {name!r} has unknown keys {unknown}")
    if kind is Kind.CONTINUOUS:
        if "levels" in entry:
            raise InvalidInput(f"{source}: column {name!r} is continuous: it takes \"bounds\", not \"levels\"")
        bins = _bins(entry, name, source)
        bounds = _bounds(entry.get("bounds"), name, source) if bins is None or "bounds" in entry else bins.bounds
        if bins is not None and bounds != bins.bounds:
            raise InvalidInput(f"{source}: column {name!r} has \"edges\" from {bins.bounds[0]:g} to {bins.bounds[1]:g} "
                               f"but \"bounds\" {list(bounds)}: expected the first and last edge to be the bounds")
        extra = (MISSING,) if has_level else ()
        levels = () if bins is None else bins.labels()
        return name, kind, 0 if bins is None else bins.count + len(extra), levels + extra, bounds, bins
    levels = entry.get("levels")
    if not isinstance(levels, list) or not levels:
        raise InvalidInput(f"{source}: column {name!r} ({kind_name}) needs \"levels\": a non-empty list in order")
    if bad := [v for v in levels if not isinstance(v, (str, int, float, bool)) or v != v]:
        raise InvalidInput(f"{source}: column {name!r} has levels {bad} that are not strings, numbers or booleans")
    keys = [level_text(v) for v in levels]
    if dup := sorted({k for k in keys if keys.count(k) > 1}):
        raise InvalidInput(f"{source}: column {name!r} repeats levels {dup}")
    if given := [k for k in ("bounds", *BIN_KEYS) if k in entry]:
        raise InvalidInput(f"{source}: column {name!r} is {kind_name}: it takes \"levels\", not \"{given[0]}\"")
    if has_level and MISSING_LABEL in keys:
        raise InvalidInput(f"{source}: column {name!r} has the level {MISSING_LABEL!r}, the name of its missing level: "
                           "rename that level, or give \"missing\": \"invalid\"")
    extra = (MISSING,) if has_level else ()
    return name, kind, len(levels) + len(extra), tuple(levels) + extra, None, None


#: A continuous column's binning keys (:mod:`privgraph.data.bins`).
BIN_KEYS = ("bins", "scale", "edges")


def _bins(entry: Mapping, name: str, source: str):
    """The public bins of a continuous column's entry (None without "bins" or "edges")."""

    where = f"{source}: column {name!r}"
    if "bins" in entry and "edges" in entry:
        raise InvalidInput(f"{where} gives both \"bins\" and \"edges\": expected one of them")
    scale = entry.get("scale", "linear")
    try:
        if "edges" in entry:
            return edges_bins(entry["edges"], scale)
        if "bins" not in entry:
            if "scale" in entry:
                raise InvalidInput("\"scale\" needs \"bins\": k (or \"edges\")")
            return None
        if entry.get("bounds") is None:
            raise InvalidInput(f"\"bins\": {entry['bins']!r} needs \"bounds\": [lo, hi] (or give \"edges\")")
        return make_bins(_bounds(entry["bounds"], name, source), entry["bins"], scale)
    except ValueError as err:
        text = str(err)
        raise InvalidInput(text if text.startswith(source) else f"{where}: {text}") from None


def _bins_entry(bins) -> dict:
    """A column's binning keys as the codebook writes them (a count and scale, or the edges)."""
    if bins.explicit:
        return {"edges": list(bins.edges)} | ({"scale": bins.scale} if bins.scale != "linear" else {})
    return {"bins": bins.count} | ({"scale": bins.scale} if bins.scale != "linear" else {})


def _bounds(bounds, name: str, source: str):
    if bounds is None:
        return None
    ok = isinstance(bounds, list) and len(bounds) == 2 and all(
        isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b) for b in bounds)
    if not ok or not bounds[0] < bounds[1]:
        raise InvalidInput(f"{source}: column {name!r} needs \"bounds\": [lo, hi] with finite lo < hi, got {bounds!r}")
    return float(bounds[0]), float(bounds[1])


def _json_level(value):
    """A level as a JSON value (numpy scalars become Python ones)."""
    if hasattr(value, "item"):
        value = value.item()
    return value if isinstance(value, (str, int, float, bool)) else str(value)


def level_text(value) -> str:
    """The canonical text of a level or a data value: how values are matched to levels.

    Integral numbers lose their ``.0``, booleans are lower case, text loses the spaces (U+0020
    only, as in SQL: a tab, NBSP or NEL is text) around it. Text is a number only in ASCII
    decimal notation (not ``1_0`` or full-width digits, which SQL does not read as numbers), so
    every engine matches a value to the same level.

    >>> [level_text(v) for v in (1, 1.0, "1", " yes ", True, "TRUE", 2.5, "\u00a0x", "１", "1_0")]
    ['1', '1', '1', 'yes', 'true', 'true', '2.5', '\xa0x', '１', '1_0']
    """
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)
    text = str(value).strip(" ")
    if text.lower() in ("true", "false"):
        return text.lower()
    if not DECIMAL.fullmatch(text):
        return text
    number = float(text)
    return level_text(number) if math.isfinite(number) else text


#: A number's text in ASCII decimal notation (what SQL casts read alike).
DECIMAL = re.compile(r"[-+]?(?:[0-9]+[.]?[0-9]*|[.][0-9]+)(?:[eE][-+]?[0-9]+)?")


def read_codebook(path) -> Domain:
    """The domain in a codebook file (see the module docstring); errors name the file.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "d.json"
    >>> _ = p.write_text('{"format": "privgraph-domain", "version": 1, "columns": '
    ...                  '[{"name": "a", "kind": "nominal", "levels": ["x", "y"]}]}')
    >>> read_codebook(p).levels
    (('x', 'y', '(missing)'),)
    """
    p = check_codebook_path(path)
    try:
        obj = json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InvalidInput(f"domain codebook {str(p)!r} is not valid JSON: {err}") from None
    return domain_from_codebook(obj, source=str(p))


def write_codebook(domain: Domain, path, *, drafted_from: str | None = None) -> Path:
    """Write ``domain`` as a codebook, atomically; returns the path."""

    text = json.dumps(domain_to_codebook(domain, drafted_from=drafted_from), indent=2) + "\n"
    return write_atomically(path, lambda tmp: Path(tmp).write_text(text))
