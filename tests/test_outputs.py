"""``privgraph.outputs``: outputs checked before spending, written all or nothing."""

from pathlib import Path

import pytest

from privgraph.outputs import check_outputs, write_all


def write_text(text):
    return lambda tmp: Path(tmp).write_text(text)


@pytest.mark.parametrize("late", ["writer fails", "missing directory"])
def test_write_all_touches_no_target_when_any_output_fails(tmp_path, late):
    (tmp_path / "old.json").write_text("old")

    def fail(tmp):
        raise OSError("disk full")

    second = (tmp_path / "b.csv", fail) if late == "writer fails" else (tmp_path / "no" / "b.csv", write_text("b"))
    with pytest.raises(OSError):
        write_all({tmp_path / "old.json": write_text("new"), tmp_path / "a.png": write_text("a"), second[0]: second[1]})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]
    assert (tmp_path / "old.json").read_text() == "old"


def test_two_flags_naming_one_file_through_a_link_are_refused(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(ValueError, match="--out and --synthetic both name"):
        check_outputs({"--out": (tmp_path / "real" / "x.csv", (".csv",)),
                       "--synthetic": (tmp_path / "link" / "x.csv", (".csv",))})
