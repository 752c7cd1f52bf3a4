"""``report.html``: the release's report as one self-contained page, its figures inline.

The page is ``report.md`` turned into HTML by :func:`markdown_html` (the subset the report
uses: headings, paragraphs, lists, tables, code, bold, images) with each image replaced by its
figure as inline SVG (:func:`~privgraph.release.figures.svg_text`: the text of every axis, level
names included, is text in the page). It loads nothing: no script, no stylesheet, no image,
no font from anywhere, and its Content-Security-Policy forbids any (``default-src 'none'``);
the PNGs stay beside it as files. Every string is escaped on the way in (a column or level
name can hold ``<``, ``&``, quotes, any character). Post-processing of the release: the page
says what ``report.md`` says and draws what the PNGs draw.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from privgraph.release.figures import svg_text

#: The page's style (inline: the page loads nothing).
STYLE = """body { font-family: sans-serif; max-width: 62rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.45;
  color: #1a1a1a; background: #fff; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #bbb; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #eee; }
code { background: #f3f3f3; padding: 0 0.2rem; }
pre { background: #f3f3f3; padding: 0.5rem; overflow-x: auto; }
figure { margin: 1rem 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9rem; color: #444; }"""

#: The page may load nothing; its own style sheet and the SVGs' style attributes are inline.
POLICY = "default-src 'none'; style-src 'unsafe-inline'"

_HEADING = re.compile(r"(#{1,6})\s+(.*)")
_ITEM = re.compile(r"(\s*)[-*]\s+(.*)")
_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`]*)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def inline_html(text: str) -> str:
    """One line of Markdown text as HTML: every character escaped, then ``code`` spans and
    ``**bold**`` (the code spans' text as written).

    >>> inline_html('**Guarantee**: `a**b` < 1 & "c"')
    '<strong>Guarantee</strong>: <code>a**b</code> &lt; 1 &amp; &quot;c&quot;'
    """
    parts = _CODE.split(text)  # even: text; odd: code
    return "".join(f"<code>{html.escape(p)}</code>" if i % 2 else _BOLD.sub(r"<strong>\1</strong>", html.escape(p))
                   for i, p in enumerate(parts))


def table_html(lines: list[str]) -> str:
    """A Markdown table (its second line the ``|---|`` rule) as an HTML table; ``\\|`` is a
    ``|`` within a cell. As GitHub's Markdown renders one, every row has the header's cells: a
    missing cell is empty, an extra one is dropped.

    >>> print(table_html(["| a | b |", "|---|---|", r"| x \\| y | <z> |", "| one cell |", "| 1 | 2 | 3 |"]))
    <table>
    <thead><tr><th>a</th><th>b</th></tr></thead>
    <tbody>
    <tr><td>x | y</td><td>&lt;z&gt;</td></tr>
    <tr><td>one cell</td><td></td></tr>
    <tr><td>1</td><td>2</td></tr>
    </tbody>
    </table>
    """
    rows = [_cells(line) for line in lines]
    is_ruled = len(rows) > 1 and all(re.fullmatch(r":?-+:?", c) for c in rows[1])
    head, body = (rows[0], rows[2:]) if is_ruled else (None, rows)
    width = len(head) if head is not None else max(map(len, rows))
    body = [(row + [""] * width)[:width] for row in body]
    out = ["<table>"]
    if head is not None:
        out.append("<thead><tr>" + "".join(f"<th>{inline_html(c)}</th>" for c in head) + "</tr></thead>")
    out += ["<tbody>", *("<tr>" + "".join(f"<td>{inline_html(c)}</td>" for c in row) + "</tr>" for row in body),
            "</tbody>", "</table>"]
    return "\n".join(out)


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def list_html(lines: list[str]) -> str:
    """A Markdown list (``-`` or ``*`` items; an item indented further is nested in the one
    above; a line that is no item continues the item above) as nested ``<ul>``.

    >>> list_html(["- a", "  more of a", "  - a.1", "- b"])
    '<ul>\\n<li>a more of a\\n<ul>\\n<li>a.1</li>\\n</ul>\\n</li>\\n<li>b</li>\\n</ul>'
    """
    items: list[tuple[int, str]] = []  # (indent, text)
    for line in lines:
        if m := _ITEM.fullmatch(line):
            items.append((len(m.group(1)), m.group(2)))
        else:
            indent, text = items[-1]
            items[-1] = (indent, f"{text} {line.strip()}")
    out, depths = [], []  # depths: the indents of the open lists
    for indent, text in items:
        if not depths or indent > depths[-1]:
            out.append("\n<ul>\n" if depths else "<ul>\n")
            depths.append(indent)
        else:
            out.append("</li>\n")
            while len(depths) > 1 and indent < depths[-1]:
                out.append("</ul>\n</li>\n")
                depths.pop()
        out.append(f"<li>{inline_html(text)}")
    return "".join(out) + "</li>\n" + "</ul>\n</li>\n" * (len(depths) - 1) + "</ul>"


def figure_html(alt: str, name: str, figures: Mapping[str, str]) -> str:
    """An image line: its figure's inline SVG (``figures``: SVG text by file name) captioned by
    ``alt`` and the name of the PNG beside the page; an image with no SVG given is a link to
    its file (the page loads no image)."""
    link = f'<a href="{html.escape(name)}">{html.escape(name)}</a>'
    if name not in figures:
        return f"<p>{html.escape(alt)}: {link}</p>"
    return f"<figure>\n{figures[name]}\n<figcaption>{html.escape(alt)} (also as {link})</figcaption>\n</figure>"


def markdown_html(markdown: str, figures: Mapping[str, str] | None = None) -> str:
    """The HTML body of ``markdown``, in the subset the report uses: ``#`` headings, paragraphs
    (lines up to a blank line), ``-`` lists, ``|`` tables, fenced code, ``code``, ``**bold**``
    and images on a line of their own (:func:`figure_html`).

    >>> print(markdown_html("# T\\n\\nA **b**\\nc.\\n\\n- x\\n\\n```\\n<1>\\n```"))
    <h1>T</h1>
    <p>A <strong>b</strong>
    c.</p>
    <ul>
    <li>x</li>
    </ul>
    <pre><code>&lt;1&gt;</code></pre>
    """
    lines, out, i = markdown.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
            out.append(f"<pre><code>{html.escape(chr(10).join(lines[i + 1:end]))}</code></pre>")
            i = end + 1
        elif m := _HEADING.fullmatch(line):
            out.append(f"<h{len(m.group(1))}>{inline_html(m.group(2).strip())}</h{len(m.group(1))}>")
            i += 1
        elif m := _IMAGE.fullmatch(line.strip()):
            out.append(figure_html(m.group(1), m.group(2), figures or {}))
            i += 1
        else:
            kind = _block_kind(line)
            j = i + 1
            while j < len(lines) and lines[j].strip() and _continues(kind, lines[j]):
                j += 1
            block = lines[i:j]
            out.append({"table": table_html, "list": list_html, "paragraph": _paragraph_html}[kind](block))
            i = j
    return "\n".join(out)


def _block_kind(line: str) -> str:
    if line.lstrip().startswith("|"):
        return "table"
    return "list" if _ITEM.fullmatch(line) else "paragraph"


def _continues(kind: str, line: str) -> bool:
    """Whether ``line`` (not blank) belongs to the block of ``kind`` above it."""
    starts_other = line.startswith("```") or _HEADING.fullmatch(line) or _IMAGE.fullmatch(line.strip())
    if starts_other:
        return False
    if kind == "table":
        return line.lstrip().startswith("|")
    if kind == "list":
        return not line.lstrip().startswith("|")
    return _block_kind(line) == "paragraph"


def _paragraph_html(lines: list[str]) -> str:
    return "<p>" + "\n".join(inline_html(line.strip()) for line in lines) + "</p>"


def page_html(markdown: str, figures: Mapping[str, str] | None = None) -> str:
    """One self-contained HTML page of ``markdown`` (titled by its first heading) with
    ``figures`` (SVG text by image file name) inline.

    >>> page = page_html("# Ö & <b>\\n\\ntext")
    >>> "<title>Ö &amp; &lt;b&gt;</title>" in page, "<script" in page, page.startswith("<!DOCTYPE html>")
    (True, False, True)
    """
    title = next((m.group(2).strip() for m in map(_HEADING.fullmatch, markdown.splitlines()) if m), "report")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n"
            f"{markdown_html(markdown, figures)}\n</body>\n</html>\n")


def page_writer(markdown: str, figures: Mapping[str, Callable]) -> Callable[[str], object]:
    """A writer of the page (for :func:`privgraph.outputs.write_all`): ``figures`` maps each
    image's file name to the figure's SVG writer (``save(file)``), drawn when the page is
    written, each with its own id prefix."""

    def write(tmp) -> None:
        svgs = {name: svg_text(save, prefix=f"fig{k}") for k, (name, save) in enumerate(figures.items())}
        Path(tmp).write_text(page_html(markdown, svgs), encoding="utf-8")

    return write


__all__ = ["POLICY", "STYLE", "figure_html", "inline_html", "list_html", "markdown_html", "page_html", "page_writer",
           "table_html"]
