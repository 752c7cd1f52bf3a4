import json
import os

import networkx as nx
import pytest

from privgraph.graphs import CPDAG, draw, from_json, to_dot, to_graphml, to_json, write_json
from privgraph.graphs import export

GRAPH = CPDAG(
    ["asia", "tub", "smoke", "lung", 'odd "name"', "iso"],
    directed=[("tub", "lung"), ("smoke", "lung")],
    undirected=[("asia", "tub"), ('odd "name"', "smoke")],
)


def test_json_round_trip():
    assert from_json(to_json(GRAPH)) == GRAPH
    assert from_json(to_json(GRAPH)).nodes == GRAPH.nodes
    data = json.loads(to_json(GRAPH))
    assert data["directed"] == [["tub", "lung"], ["smoke", "lung"]]


def test_adjacency_round_trip():
    assert CPDAG.from_adjacency(GRAPH.to_adjacency(), GRAPH.nodes) == GRAPH


def test_dot_lists_every_edge_and_node():
    dot = to_dot(GRAPH)
    assert dot.startswith("digraph cpdag {") and dot.endswith("}")
    assert '"tub" -> "lung";' in dot
    assert '"smoke" -> "lung";' in dot
    assert '"asia" -> "tub" [dir=none];' in dot
    assert '"smoke" -> "odd \\"name\\"" [dir=none];' in dot
    assert '"iso";' in dot


def test_graphml_readable_by_networkx(tmp_path):
    path = to_graphml(GRAPH, tmp_path / "g.graphml")
    back = nx.read_graphml(path)
    assert set(back.nodes) == set(GRAPH.nodes)
    assert back.edges["tub", "lung"]["kind"] == "directed"
    assert CPDAG.from_networkx(back) == GRAPH


def test_write_json(tmp_path):
    path = write_json(GRAPH, tmp_path / "g.json")
    assert from_json(path.read_text()) == GRAPH
    assert os.listdir(tmp_path) == ["g.json"]


def test_png_exists_and_is_nonempty(tmp_path):
    path = draw(GRAPH, tmp_path / "g.png", title="asia")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert os.listdir(tmp_path) == ["g.png"]


def test_draw_single_node_and_empty_graph(tmp_path):
    assert draw(CPDAG(["a"]), tmp_path / "one.png").stat().st_size > 0
    assert draw(CPDAG([]), tmp_path / "none.png").stat().st_size > 0


@pytest.mark.parametrize("directed,undirected", [([], [("c", "d")]), ([("c", "d")], []), ([], [])])
def test_draw_a_graph_with_one_kind_of_edge_and_isolated_nodes(tmp_path, directed, undirected):
    """Post-processing after the spend must not crash (networkx 3.6 failed on an empty edge list)."""
    g = CPDAG(["a", "b", "c", "d", "e"], directed=directed, undirected=undirected)
    assert draw(g, tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(ValueError, match="not supported"):
        draw(GRAPH, tmp_path / "g.unknownformat")
    assert os.listdir(tmp_path) == []


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "g.graphml"
    target.write_text("old")

    def broken(graph, path):
        with open(path, "w") as f:
            f.write("half")
        raise OSError("disk full")

    monkeypatch.setattr(export.nx, "write_graphml", broken)
    with pytest.raises(OSError, match="disk full"):
        to_graphml(GRAPH, target)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["g.graphml"]


def test_missing_directory_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="directory .*nowhere.* does not exist"):
        write_json(GRAPH, tmp_path / "nowhere" / "g.json")
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to a read-only directory")
def test_unwritable_directory_leaves_nothing(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(PermissionError):
            draw(GRAPH, locked / "g.png")
        assert os.listdir(locked) == []
    finally:
        locked.chmod(0o700)


def test_written_files_are_readable_by_others(tmp_path):
    path = write_json(GRAPH, tmp_path / "g.json")
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "got keys list"),
        ('{"nodes": ["a"], "directed": [], "undirected": {}}', "got keys \\['directed', 'nodes', 'undirected'\\]"),
        ('{"nodes": ["a"], "directed": [["a", "b"]], "undirected": []}', "names unknown node 'b'"),
    ],
)
def test_from_json_bad_input(text, message):
    with pytest.raises(ValueError, match=message):
        from_json(text)


def test_import_privgraph_does_not_import_networkx_or_matplotlib():
    import subprocess
    import sys

    def loaded_after(statement: str) -> list[str]:
        code = f"import sys; {statement}; print('networkx' in sys.modules, 'matplotlib' in sys.modules)"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()

    assert loaded_after("import privgraph") == ["False", "False"]
    assert loaded_after("import privgraph.graphs") == ["True", "False"]


def test_a_node_name_is_drawn_as_written_not_as_tex():
    # "$1-$5" would be read as TeX math (drawn "1-5" in italics) if the label were not escaped
    import io

    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        export.drawing_writer(CPDAG(["$1-$5", "b"], directed=[("$1-$5", "b")]), "svg")(buffer)
    assert ">$1-$5</text>" in buffer.getvalue().decode()
