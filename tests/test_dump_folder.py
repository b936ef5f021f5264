"""The dump folder's writes when the disk refuses, and reading a folder whose index.json is
missing or older than its files (no torch: the folder and the report's reader alone)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from framescope.dump.folder import DumpFolder, NotWritten, is_dump_file, remove_stale
from framescope.report import format_summary, load_dump, write_report

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dump_sample"


def opened(path: Path) -> DumpFolder:
    folder = DumpFolder(path)
    folder.open()
    return folder


def test_a_write_is_whole_and_leaves_no_temporary_file(tmp_path):
    folder = opened(tmp_path / "d")
    path = folder.write("sub/a.py", "x = 1\n")
    assert path.read_text() == "x = 1\n"
    assert folder.write("b.bin", b"\x00\x01").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in (tmp_path / "d").rglob("*")) == ["a.py", "b.bin", "sub"]


def test_a_blocked_name_is_refused_and_the_others_written(tmp_path):
    folder = opened(tmp_path / "d")
    (tmp_path / "d" / "index.json").mkdir()
    with pytest.raises(NotWritten) as first:
        folder.write("index.json", "{}")
    assert first.value.first and "index.json not written" in str(first.value)
    with pytest.raises(NotWritten) as again:
        folder.write("index.json", "{}")
    assert not again.value.first  # the caller warns once
    assert folder.stopped is None and folder.write("index.md", "# dump\n").is_file()
    assert not list((tmp_path / "d").glob(".*.tmp"))


def test_a_deleted_folder_stops_the_dump_and_is_not_made_again(tmp_path):
    folder = opened(tmp_path / "d")
    folder.write("a.py", "pass\n")
    shutil.rmtree(str(tmp_path / "d"))
    with pytest.raises(NotWritten) as first:
        folder.write("b.py", "pass\n")
    assert first.value.first and "deleted or replaced" in str(first.value)
    with pytest.raises(NotWritten) as later:
        folder.write("c.py", "pass\n", retry=True)
    assert not later.value.first
    assert not (tmp_path / "d").exists()


def test_a_folder_replaced_by_another_stops_the_dump(tmp_path):
    folder = opened(tmp_path / "d")
    (tmp_path / "d").rename(tmp_path / "old")  # moved away, and another folder of its name made
    (tmp_path / "d").mkdir()
    with pytest.raises(NotWritten):
        folder.write("a.py", "pass\n")
    assert list((tmp_path / "d").iterdir()) == []


def test_a_folder_that_cannot_be_made_is_stopped(tmp_path):
    (tmp_path / "file").write_text("")
    folder = opened(tmp_path / "file" / "d")
    assert folder.stopped and "cannot create the folder" in folder.stopped
    with pytest.raises(NotWritten):
        folder.write("a.py", "pass\n")


def test_remove_stale_takes_dump_files_and_their_temporaries_only(tmp_path):
    names = ["index.json", "__transformed_code_0_for_f.py", ".__transformed_code_0_for_f.py.123.tmp",
             "__compiled_fn_1.piece_2.inductor.py", "notes.py", ".other.123.tmp"]
    for name in names:
        (tmp_path / name).write_text("")
    remove_stale(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.123.tmp", "notes.py"]
    assert is_dump_file("full_code_for_f.py") and not is_dump_file("full_code_for_f.pyc")


def test_a_folder_without_index_loads_from_its_file_names(tmp_path):
    shutil.copytree(str(FIXTURE), str(tmp_path / "d"))
    (tmp_path / "d" / "index.json").unlink()
    dump = load_dump(str(tmp_path / "d"))
    assert dump.warnings[0].startswith("index.json is missing")
    frames = {frame.id: [entry.file for entry in frame.entries] for frame in dump.frames}
    assert frames == {
        "f": ["__transformed_code_%d_for_f.py" % index for index in range(4)],
        "torch_dynamo_resume_in_f_at_13": ["__transformed_code_0_for_torch_dynamo_resume_in_f_at_13.py"],
        "torch_dynamo_resume_in_f_at_15": ["__transformed_code_0_for_torch_dynamo_resume_in_f_at_15.py"],
    }
    assert all(frame.full_code == "full_code_for_%s.py" % frame.id for frame in dump.frames)
    assert [graph.name for graph in dump.graphs] == ["__compiled_fn_%d" % n for n in range(1, 7)]
    assert list(dump.graph("__compiled_fn_1").files) == ["dynamo", "aot_forward", "post_grad", "inductor"]
    assert "index.json is missing" in format_summary(dump)
    page = Path(write_report(dump, str(tmp_path / "report"))).read_text(encoding="utf-8")
    assert "index.json is missing" in page


def test_files_the_index_names_but_the_folder_lacks_are_said(tmp_path):
    shutil.copytree(str(FIXTURE), str(tmp_path / "d"))
    gone = sorted((tmp_path / "d").glob("__transformed_code_*.py"))[0]
    gone.unlink()
    dump = load_dump(str(tmp_path / "d"))
    said = [w for w in dump.warnings if "not in the folder" in w]
    assert said and gone.name in said[0]
    write_report(dump, str(tmp_path / "report"))
