"""Records of a CSV file under a dialect fixed before a byte of data is read.

A CSV reader that *sniffs* its input lets one record decide how the whole file is parsed: a
line with a ninth field made DuckDB's auto-detection drop the header, a stray quote made it
read the rest of the file as one value, a bad byte stopped it with the record in the error.
Any of these is a check that reads the data, outside a mechanism. So privgraph parses a
CSV file by one fixed rule, the same in every engine (DuckDB SQL, Spark SQL, and the pandas
frames, which come from the DuckDB query):

* **The dialect is public.** :class:`Dialect` (delimiter, quote, encoding, header) comes
  from the codebook's ``"csv"`` object or from flags, never from the data; the default is
  RFC 4180 CSV in UTF-8 with a header line.
* **One line, one record.** Lines end at LF, CRLF or a lone CR; an empty line is not a
  record (every CSV reader skips it). A quoted field may hold the delimiter and doubled
  quotes but not a line break, so no line can change how another is read: an unterminated
  quote spoils its own line only.
* **A line that does not parse is an invalid record**: a wrong number of fields, a quote
  that does not close (or text after a closing quote), bytes that are not valid in the
  encoding (in UTF-8 also the replacement character U+FFFD, which Spark's reader writes for
  such bytes), one of the control characters U+001C to U+001F (:data:`MARKS`), or more than
  4 MiB (:mod:`privgraph.data.long_lines`: the scans count such lines, never skip them). Such a
  line becomes a record whose every value is missing: the missing level of each column
  that has one (:mod:`privgraph.data.missing`), and elsewhere an invalid value, which the
  relation's policy handles like an out-of-domain value: dropped under add/remove, recoded
  under replace-one (:mod:`privgraph.data.frontdoor`). It is never an error, and no parser message, which
  would quote the line, reaches the user.
* **The header** (the first line) is schema, not a record: it is read here in Python,
  checked against the codebook, and errors about it name the file and the codebook's
  columns, never the line's text (a file without its header would otherwise print a
  record).

How the scan works: DuckDB reads each line whole as UTF-8 text (a delimiter that begins with
a line feed, so no line can hold it, and no quoting); in SQL the line is then split and
validated. Its reader checks UTF-8 itself and skips a line that is not valid UTF-8, so one
streamed pass over the file finds those lines (:func:`~privgraph.data.long_lines.unread_lines`,
with the lines over 4 MiB) and the scan adds each back as a record of missing values. A
Latin-1 file, where every byte is a character, is scanned through a UTF-8 copy
(:mod:`privgraph.data.transcoded`: DuckDB's own Latin-1 decoder refuses bytes 0x80-0x9F). So
no byte of a record can stop a scan. :func:`split_line` is the same rule in Python, the
reference the SQL is tested against.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import os
from pathlib import Path
from typing import Mapping, Sequence

from privgraph.data.long_lines import MAX_LINE_BYTES, SCAN_LINE_BYTES, long_lines, unread_lines
from privgraph.data.names import quote as ident
from privgraph.data.transcoded import utf8_copy
from privgraph.validation import InvalidInput, UnknownName, one_of

#: The encodings a dialect may name.
ENCODINGS = ("utf-8", "latin-1")
#: Longest header line read (bytes).
MAX_HEADER_BYTES = 1 << 20
#: Control characters that make a line invalid (U+001C to U+001F: no text field holds them).
MARKS = "\x1c\x1d\x1e\x1f"
#: The raw scan's delimiter: it begins with a line feed, which ends every line first, so the
#: scan never splits a line and each one arrives whole in one column (a delimiter that a line
#: could hold would hide the rest of that line from the checks).
SEPARATOR = "\n\x1c"
#: Column flagging a line that parsed, in :func:`records_query`'s result.
VALID = "privgraph_valid"


@dataclass(frozen=True)
class Dialect:
    """How a CSV file is read: fixed before any data is read (public).

    ``quote=None`` reads quote characters as ordinary text. ``header=False`` means the
    file's fields are the codebook's columns, in its order, from the first line on.

    >>> Dialect()
    Dialect(delimiter=',', quote='"', encoding='utf-8', header=True)
    >>> Dialect(delimiter=";;")
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: the CSV delimiter must be one ASCII character (not a quote, a line break or U+001F), got ';;'
    """

    delimiter: str = ","
    quote: str | None = '"'
    encoding: str = "utf-8"
    header: bool = True
    columns: tuple[str, ...] = field(default=(), repr=False)  # the file's columns when header=False

    def __post_init__(self):
        if not _is_mark(self.delimiter) or self.delimiter == self.quote:
            raise InvalidInput("the CSV delimiter must be one ASCII character (not a quote, a line break or U+001F), "
                               f"got {self.delimiter!r}")
        if self.quote is not None and not _is_mark(self.quote):
            raise InvalidInput(f"the CSV quote must be one ASCII character (not a line break or U+001F) or null, "
                               f"got {self.quote!r}")
        one_of("the CSV encoding", self.encoding, ENCODINGS)
        if not isinstance(self.header, bool):
            raise InvalidInput(f"the CSV header must be true or false, got {self.header!r}")

    @classmethod
    def from_codebook(cls, spec: Mapping | None, source: str = "codebook", names: Sequence[str] = ()) -> "Dialect":
        """The dialect a codebook's ``"csv"`` object names (missing keys: the default);
        without a header the file's columns are the codebook's ``names``, in order.

        >>> Dialect.from_codebook({"delimiter": ";"}).delimiter
        ';'
        >>> Dialect.from_codebook({"sep": ";"}, "d.json")
        Traceback (most recent call last):
        ...
        privgraph.validation.InvalidInput: d.json: "csv" has unknown keys ['sep']; expected delimiter, quote, encoding, header
        """
        if spec is None:
            return cls()
        if not isinstance(spec, Mapping):
            raise InvalidInput(f"{source}: \"csv\" must be an object, got {type(spec).__name__}")
        keys = ("delimiter", "quote", "encoding", "header")
        if unknown := sorted(set(spec) - set(keys)):
            raise InvalidInput(f"{source}: \"csv\" has unknown keys {unknown}; expected {', '.join(keys)}")
        try:
            dialect = cls(**dict(spec))
        except (TypeError, ValueError) as err:
            raise InvalidInput(f"{source}: {err}") from None
        return dialect if dialect.header else replace(dialect, columns=tuple(names))

    def to_codebook(self) -> dict | None:
        """The codebook's ``"csv"`` object (None for the default dialect)."""
        if replace(self, columns=()) == Dialect():
            return None
        return {"delimiter": self.delimiter, "quote": self.quote, "encoding": self.encoding, "header": self.header}


def _is_mark(char) -> bool:
    """A delimiter or quote the scan can use: one ASCII character, not a line break or U+001F."""
    return isinstance(char, str) and len(char) == 1 and char.isascii() and char not in ("\n", "\r") \
        and char not in MARKS


def split_line(line: str, dialect: Dialect) -> list[str] | None:
    """The fields of one line (without its line break), or None if it does not parse.

    The reference rule the SQL scan implements (tested against it):

    >>> split_line('a,"b,c","x""y"', Dialect())
    ['a', 'b,c', 'x"y']
    >>> split_line('a,"b', Dialect()), split_line('a,"b"c', Dialect()), split_line('a,b"c', Dialect())
    (None, None, None)
    >>> split_line('a,b"c', Dialect(quote=None))
    ['a', 'b"c']
    """
    d, q = dialect.delimiter, dialect.quote
    if any(c in line for c in MARKS):
        return None
    if q is None or q not in line:
        return line.split(d)
    fields, i, n = [], 0, len(line)
    while True:
        if i < n and line[i] == q:
            j, value = i + 1, []
            while True:
                k = line.find(q, j)
                if k < 0:
                    return None
                value.append(line[j:k])
                if k + 1 < n and line[k + 1] == q:
                    value.append(q)
                    j = k + 2
                    continue
                i = k + 1
                break
            fields.append("".join(value))
        else:
            k = line.find(d, i)
            k = n if k < 0 else k
            if q in line[i:k]:
                return None
            fields.append(line[i:k])
            i = k
        if i == n:
            return fields
        if line[i] != d:
            return None
        i += 1
        if i == n:
            fields.append("")
            return fields


def header_of(path: Path, dialect: Dialect) -> list[str]:
    """The column names of a CSV file: its first line under ``dialect`` (BOM and CR stripped),
    or the codebook's columns (``dialect.columns``, in order) when the dialect has no header.

    Errors name the file and what was expected, never the line's text (a file that lost its
    header would print a record). A repeated name is refused (readers rename it silently).

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfa;b\\r\\n1;2\\n")
    >>> header_of(p, Dialect(delimiter=";"))
    ['a', 'b']
    >>> _ = p.write_text("a,b,a\\n")
    >>> header_of(p, Dialect())
    Traceback (most recent call last):
    ...
    privgraph.validation.InvalidInput: data file '...t.csv': its header (line 1) names a column more than once: expected each column once
    """
    if not dialect.header:
        if not dialect.columns:
            raise InvalidInput(f"data file {str(path)!r}: a CSV dialect without a header needs a codebook naming "
                               "the file's columns in order")
        return list(dialect.columns)
    what = f"data file {str(path)!r}"
    with open(path, "rb") as f:
        raw = f.readline(MAX_HEADER_BYTES + 1)
    if len(raw) > MAX_HEADER_BYTES:
        raise InvalidInput(f"{what}: its header (line 1) is longer than {MAX_HEADER_BYTES} bytes: expected a line naming the columns")
    first = raw.splitlines()[0] if raw.splitlines() else b""
    if dialect.encoding == "utf-8" and first.startswith(b"\xef\xbb\xbf"):
        first = first[3:]
    try:
        text = first.decode(dialect.encoding)
    except UnicodeDecodeError:
        raise InvalidInput(f"{what}: its header (line 1) is not valid {dialect.encoding}: expected a line naming "
                           "the columns (or give the codebook's \"csv\" its encoding)") from None
    fields = split_line(text, dialect) if text.strip() else None
    if not fields or not any(f.strip() for f in fields):
        raise InvalidInput(f"{what} is empty or its header (line 1) does not parse: expected a header line naming the "
                           f"columns, separated by {dialect.delimiter!r}")
    if len(set(fields)) != len(fields):
        raise InvalidInput(f"{what}: its header (line 1) names a column more than once: expected each column once")
    return fields


def check_header(path: Path, header: Sequence[str], names: Sequence[str]) -> None:
    """The codebook's ``names`` must all be in the file's header; the message lists the codebook's
    columns that are missing, and how many fields the header has (not their text).

    >>> try:
    ...     check_header(Path("d.csv"), ["no", "yes"], ["asia", "no"])
    ... except KeyError as err:
    ...     print(err.args[0])
    data file 'd.csv': its header (line 1, 2 fields) does not name the codebook's column 'asia': expected a header naming every codebook column (or header: false in the codebook's csv object)
    """
    if missing := [n for n in names if n not in header]:
        which = f"column {missing[0]!r}" if len(missing) == 1 else f"columns {missing[:10]}"
        raise UnknownName(f"data file {str(path)!r}: its header (line 1, {len(header)} fields) does not name the "
                          f"codebook's {which}: expected a header naming every codebook column (or header: false in "
                          "the codebook's csv object)")


def _rx(char: str) -> str:
    """One character as a regex escape both RE2 (DuckDB) and Java (Spark) read."""
    return "\\x{%X}" % ord(char)


def line_patterns(dialect: Dialect, *, possessive: bool = False) -> tuple[str, str]:
    """(the regex a whole quoted line must match, the regex whose group 1 is each field after a
    delimiter) for lines that hold the quote character. ``possessive`` writes Java's possessive
    loops (Spark): the same language, matched without backtracking or deep recursion.

    >>> import re
    >>> full, field = line_patterns(Dialect())
    >>> bool(re.fullmatch(full.replace("{", "").replace("}", ""), 'a,"b,""c""d"'))
    True
    """
    d, q, star = _rx(dialect.delimiter), _rx(dialect.quote), "*+" if possessive else "*"
    one = f"(?:{q}[^{q}]{star}(?:{q}{q}[^{q}]{star}){star}{q}|[^{d}{q}]{star})"
    return f"{one}(?:{d}{one}){star}", f"{d}({one})"


def _has_marks(column: str) -> str:
    """SQL: ``column`` holds one of the :data:`MARKS`."""
    return "(" + " OR ".join(f"contains({column}, chr({ord(c)}))" for c in MARKS) + ")"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def records_query(path: Path, header: Sequence[str], names: Sequence[str], dialect: Dialect) -> str:
    """A DuckDB sub-query over a CSV file: one row per non-empty line after the header, the
    text of each of ``names`` (NULL for an empty field, and in every column of a line that does
    not parse) and :data:`VALID`. The records of the lines the scan does not read (over 4 MiB, or
    not valid UTF-8: :func:`~privgraph.data.long_lines.unread_lines`) come last.

    >>> import tempfile, duckdb
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_bytes(b'a,b\\nx,"1"\\n"x,2\\n\\ny,2,3\\nz,\\xff\\n\\xc3\\xbc,"a""b"\\r\\n')
    >>> duckdb.sql(f"SELECT * FROM {records_query(p, ['a', 'b'], ['b', 'a'], Dialect())}").fetchall()
    [('1', 'x', True), (None, None, False), (None, None, False), ('a"b', 'ü', True), (None, None, False)]
    """

    is_utf8 = dialect.encoding == "utf-8"
    # a Latin-1 file through its UTF-8 copy: a byte over 0x7F is two there, so its reader's limit doubles
    source, limit = (path, SCAN_LINE_BYTES) if is_utf8 else (utf8_copy(path), 2 * SCAN_LINE_BYTES)
    scan = (f"read_csv({_literal(str(source))}, columns = {{'l': 'VARCHAR'}}, "
            f"header = {str(dialect.header).lower()}, delim = {_literal(SEPARATOR)}, quote = '', escape = '', "
            f"new_line = '\\n', encoding = 'utf-8', auto_detect = false, strict_mode = false, null_padding = true, "
            f"max_line_size = {limit}, ignore_errors = true)")  # the errors left: a line too long, or not UTF-8
    # lines the scan does not read (over the limit, not UTF-8), and those over the limit it read
    # (dropped), are each a record of missing values; a line's size is its bytes in the file
    unread = len(unread_lines(path, header=dialect.header, encoding=dialect.encoding))
    size = "strlen(v)" if is_utf8 else "length(v)"
    view = "(CASE WHEN ends_with(l, chr(13)) THEN left(l, length(l) - 1) ELSE l END)"
    ok = f"s IS NOT NULL AND NOT {_has_marks('s')}"
    if is_utf8:  # U+FFFD too: what Spark's reader writes for a byte that is not UTF-8
        ok += " AND NOT contains(s, chr(65533))"
    d = _literal(dialect.delimiter)  # ASCII: the same bytes in every encoding
    if dialect.quote is None:
        fields = f"string_split(s, {d})"
    else:
        full, field = line_patterns(dialect)
        q = _literal(dialect.quote)
        unquote = f"CASE WHEN starts_with(f, {q}) THEN replace(f[2:-2], {q} || {q}, {q}) ELSE f END"
        fields = (f"CASE WHEN NOT contains(s, {q}) THEN string_split(s, {d}) "
                  f"WHEN regexp_full_match(s, {_literal(full)}) "
                  f"THEN list_transform(regexp_extract_all({d} || s, {_literal(field)}, 1), lambda f: {unquote}) END")
    valid = f"({ok} AND fs IS NOT NULL AND len(fs) = {len(header)})"
    cols = ", ".join(f"CASE WHEN {VALID} THEN NULLIF(fs[{list(header).index(n) + 1}], '') END AS {ident(n)}"
                     for n in names)
    # an empty line (and the empty line DuckDB's scan sees inside a CRLF) reads as NULL: not a record
    lines = (f"(SELECT v AS s FROM (SELECT {view} AS v FROM {scan} WHERE l IS NOT NULL) "
             f"WHERE {size} <= {MAX_LINE_BYTES} UNION ALL SELECT NULL FROM range({unread}))")
    return (f"(SELECT {cols}{', ' if cols else ''}{VALID} FROM (SELECT fs, {valid} AS {VALID} FROM "
            f"(SELECT s, {fields} AS fs FROM {lines})))")


def spark_records(spark, path: Path, header: Sequence[str], dialect: Dialect):
    """A Spark DataFrame of a CSV file's records: :func:`records_query`'s rule in Spark SQL
    (every column of ``header`` as text, NULL where empty or on a line that does not parse,
    and :data:`VALID`). Spark's text source splits lines at LF, CRLF and CR as DuckDB does
    and decodes UTF-8 with U+FFFD for bytes that do not decode, which marks the line invalid
    here as there. The header is the first line of the file's first block (the first row of
    the partition that starts at byte 0), so it is dropped without a second job. Lines over
    4 MiB: Hadoop's line reader skips those beyond its maximum, the rest are dropped here, and
    each one is a record of missing values at the end (:mod:`privgraph.data.long_lines`).
    """
    from pyspark.sql import functions as F

    if dialect.encoding != "utf-8":
        raise InvalidInput(f"data file {str(path)!r}: --engine spark reads UTF-8 files only; the codebook's \"csv\" "
                           f"names {dialect.encoding!r} (use --engine duckdb, or convert the file to UTF-8)")
    lines = spark.read.option("mapreduce.input.linerecordreader.line.maxlength", SCAN_LINE_BYTES).text(str(path))
    if dialect.header:
        first = (F.input_file_block_start() == 0) & ((F.monotonically_increasing_id() % F.lit(1 << 33)) == 0)
        lines = lines.where(~first)
    # DuckDB's raw scan, exactly: each line whole; Spark keeps empty lines, DuckDB skips them. The
    # text source keeps a line's raw bytes: a round trip through a Java string writes U+FFFD for
    # each byte that is not UTF-8, which the check below then sees
    utf8 = F.decode(F.encode(F.col("value"), "UTF-8"), "UTF-8")
    lines = lines.where((F.col("value") != "") & (F.octet_length("value") <= MAX_LINE_BYTES)).select(utf8.alias("s"))
    long = spark.range(len(long_lines(path, header=dialect.header))).select(F.lit(None).cast("string").alias("s"))
    lines = lines.unionByName(long)
    s = F.col("s")
    split = F.split(s, _rx(dialect.delimiter), -1)
    if dialect.quote is None:
        fields = split
    else:
        full, field = line_patterns(dialect, possessive=True)
        q = dialect.quote

        def unquote(f):
            inner = f.substr(F.lit(2), F.length(f) - 2)
            return F.when(f.startswith(q), F.replace(inner, F.lit(q + q), F.lit(q))).otherwise(f)

        extracted = F.regexp_extract_all(F.concat(F.lit(dialect.delimiter), s), F.lit(field), 1)
        fields = (F.when(~s.contains(q), split)
                  .when(s.rlike(f"^{full}$"), F.transform(extracted, unquote)))
    marks = F.lit(False)
    for c in MARKS:
        marks = marks | s.contains(c)
    ok = s.isNotNull() & ~marks & ~s.contains("\ufffd")
    parsed = lines.select(fields.alias("fs"), ok.alias("ok"))
    valid = (F.col("ok") & F.col("fs").isNotNull() & (F.size("fs") == len(header))).alias(VALID)
    parsed = parsed.select("fs", valid)
    cols = [F.when(F.col(VALID), F.nullif(F.get("fs", i), F.lit(""))).alias(n) for i, n in enumerate(header)]
    return parsed.select(*cols, VALID)


def check_csv_file(path, dialect: Dialect, names: Sequence[str] | None = None) -> list[str]:
    """The header of a CSV file under ``dialect``, checked against the codebook's ``names``
    (those that must be present; for a header-less dialect, all of the file's columns)."""
    path = Path(os.fspath(path))
    header = header_of(path, dialect)
    if names is not None:
        check_header(path, header, names)
    return header


__all__ = ["Dialect", "ENCODINGS", "VALID", "check_csv_file", "check_header", "header_of", "records_query",
           "spark_records", "split_line"]
