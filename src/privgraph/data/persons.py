"""The data side of the person as the privacy unit: at most k rows per person, chosen secretly.

:mod:`privgraph.privacy.person` has the guarantee and its proof; this module keeps at most
``k`` rows of each person (:func:`truncate`) in the engine that holds the data, and joins the
two for the estimators (:func:`person_unit`, :func:`fit_per_person`, :func:`plan_per_person`).

**The choice of rows.** Each row of a person gets a key, a keyed hash (SipHash, the secret
64-bit ``salt``) of the person's id and the row's place among that person's rows in the
input's order; the person keeps the ``k`` rows of smallest key. The keys of one person's rows
depend on that person's rows and the salt only, never on another person's: two datasets that
differ by one person's history keep exactly the same rows of everyone else. With a secret
salt the kept rows are a uniformly random k-subset of the person's rows (a keyed hash is a
pseudorandom function), and the salt is never drawn from the noise sampler
(:func:`~privgraph.privacy.person.truncation_salt`). A person with at most k rows keeps them
all, in their order: data with one row per person and ``k = 1`` is unchanged.

**A missing id** (empty, NULL, NaN): the row is dropped. It cannot be told whose it is, and
making it a person of its own would let one person's unlabelled rows escape the bound (r
such rows would count as r persons). Dropping is a fixed rule of each row on its own: one
person added or removed still changes the kept rows by their kept rows only.

**The engines.** A pandas DataFrame is truncated here (the numpy path); a DuckDB relation, a
CSV or Parquet file (read as text by DuckDB, out of core) and a Spark DataFrame are truncated
inside their engine, by :func:`privgraph.data.persons_sql.truncate_relation` and
:func:`~privgraph.data.persons_sql.truncate_spark` (the same rule in SQL). Every path drops
the person column: it is never counted, modelled or released. The input is never modified.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from privgraph.data import persons_sql
from privgraph.data.codebook import person_column
from privgraph.data.files import connect, duckdb_source
from privgraph.data.frontdoor import resolve_domain
from privgraph.data.names import quote
from privgraph.data.relation import is_duckdb_relation, is_spark_frame
from privgraph.privacy.person import PersonUnit, check_unit, fit_by_person, plan_by_person
from privgraph.validation import InvalidInput, UnknownName


def truncate(X, column: str, k: int, salt: int, *, columns: Sequence[str] = (), dialect=None):
    """``X`` with at most ``k`` rows of each person (named by ``column``), the person column
    dropped (see the module docstring).

    ``X``: a pandas DataFrame (truncated here, :func:`truncate_frame`), a DuckDB relation, a
    CSV/Parquet path (``columns``: the columns to read besides the person's, by the codebook's
    ``dialect``) or a Spark DataFrame (truncated in the engine).

    >>> df = pd.DataFrame({"pid": [1, 1, 1, 2], "a": [0, 1, 0, 1]})
    >>> out = truncate(df, "pid", 2, salt=7)
    >>> len(out), list(out.columns), int(out["a"].iloc[-1])
    (3, ['a'], 1)
    """
    if isinstance(X, pd.DataFrame):
        return truncate_frame(X, column, k, salt)
    if isinstance(X, (str, os.PathLike)):
        return persons_sql.truncate_relation(file_relation(Path(X), [*columns, column], dialect), column, k, salt)
    if is_duckdb_relation(X):
        return persons_sql.truncate_relation(X, column, k, salt)
    if is_spark_frame(X):
        return persons_sql.truncate_spark(X, column, k, salt)
    raise InvalidInput(f"a person column ({column!r}) needs data that holds it: a DataFrame, a CSV/Parquet file, a "
                       f"DuckDB relation or a Spark DataFrame, got {type(X).__name__}")


def truncate_frame(frame: pd.DataFrame, column: str, k: int, salt: int) -> pd.DataFrame:
    """At most ``k`` rows of each person of ``frame`` (named by ``column``), in their order,
    the rows without a person dropped and the person column too; ``frame`` is unmodified.

    >>> df = pd.DataFrame({"pid": ["u", "u", "u", None, "v"], "a": [0, 1, 2, 3, 4]})
    >>> out = truncate_frame(df, "pid", 1, salt=1)
    >>> list(out.columns), len(out), int(out["a"].iloc[-1]), len(df)
    (['a'], 2, 4, 5)
    >>> truncate_frame(df, "pid", 3, salt=1)["a"].tolist()
    [0, 1, 2, 4]
    """
    if column not in frame.columns:
        raise UnknownName(f"the person column {column!r} (the codebook's \"id\") is not in the data "
                          f"{[str(c) for c in frame.columns]}")
    keep = kept_rows(frame[column], k, salt)
    return frame.loc[keep].drop(columns=[column])


def kept_rows(ids: pd.Series, k: int, salt: int) -> np.ndarray:
    """The boolean mask of the rows kept: at most ``k`` per person, the ``k`` of smallest
    keyed-hash key (:func:`row_keys`); a row without an id is not kept.

    >>> int(kept_rows(pd.Series(["a", "b", "a", "a", ""]), 2, 5).sum()), kept_rows(pd.Series(["a", "b"]), 1, 5).tolist()
    (3, [True, True])
    """
    text = ids.astype("string").str.strip(" ")
    present = (~ids.isna() & (text != "")).fillna(False).to_numpy(dtype=bool)
    person = pd.factorize(text.where(pd.Series(present, index=ids.index)), use_na_sentinel=True)[0]
    keys = row_keys(text.fillna(""), person, salt)
    order = np.lexsort((keys, person))
    sorted_person = person[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_person)) + 1]
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    return present & (rank < k)


def row_keys(text: pd.Series, person: np.ndarray, salt: int) -> np.ndarray:
    """Each row's key: SipHash keyed by ``salt`` of its person's id text and its place among
    that person's rows (0, 1, ... in the input's order). Independent of every other person.

    >>> a = row_keys(pd.Series(["x", "x", "y"]), np.array([0, 0, 1]), 3)
    >>> b = row_keys(pd.Series(["z", "x", "x", "y"]), np.array([0, 1, 1, 2]), 3)
    >>> a.tolist() == b[1:].tolist()
    True
    """
    place = pd.Series(person).groupby(person).cumcount().to_numpy()
    labels = (text.to_numpy(dtype=object).astype(str).astype(object) + "\x1f" + place.astype(str).astype(object))
    return pd.util.hash_array(labels, hash_key=f"{int(salt) & (2 ** 64 - 1):016x}", categorize=False)


def file_relation(path: Path, names: Sequence[str], dialect=None):
    """A DuckDB relation of a CSV/Parquet file's ``names``, every CSV value text (read by the
    codebook's ``dialect``, as the front door reads files: a line that does not parse is a
    record of missing values, its person missing too), out of core."""
    con = connect(csv_columns=len(names))
    source = duckdb_source(path, list(names), all_text=True, dialect=dialect, con=con)
    return con.sql(f"SELECT {', '.join(quote(n) for n in names)} FROM {source}")


def person_unit(domain, k, neighbours) -> PersonUnit | None:
    """The privacy unit of a fit: the codebook's person column (``"id"``) and the bound ``k``
    (``max_rows_per_person``), both or neither (:func:`~privgraph.privacy.person.check_unit`).

    >>> cb = {"format": "privgraph-domain", "version": 1, "id": "pid",
    ...       "columns": [{"name": "a", "kind": "nominal", "levels": [0, 1]}]}
    >>> person_unit(cb, 2, "add_remove").describe(), person_unit(None, None, "add_remove")
    ('for each person (at most 2 rows each)', None)
    """
    return check_unit(person_column(domain), k, neighbours)


def fit_per_person(estimator, unit: PersonUnit, X, *, domain, **fit_kwargs):
    """Fit ``estimator`` with ``unit`` as the privacy unit: ``X`` truncated in its engine
    (:func:`truncate`), the row-level add/remove fit on it with the codebook's domain
    (:func:`~privgraph.privacy.person.fit_by_person`)."""
    public = resolve_domain(None, domain)

    def truncated(data, column, k, salt):
        return truncate(data, column, k, salt, columns=public.without_derived().names, dialect=public.csv)

    return fit_by_person(estimator, unit, X, truncate=truncated, domain=public, **fit_kwargs)


def plan_per_person(estimator, unit: PersonUnit, domain, n_rows):
    """The plan of :func:`fit_per_person` (the codebook's domain, the row-level plan carrying
    the unit)."""
    return plan_by_person(estimator, unit, resolve_domain(None, domain), n_rows)


__all__ = ["file_relation", "fit_per_person", "kept_rows", "person_unit", "plan_per_person", "row_keys", "truncate",
           "truncate_frame"]
