"""The dump under faults, on real torch: the folder fails (read-only, full, deleted, a file
blocked), the process is killed or interrupted mid-compile. The program's results and exit
status must not change, framescope warns at most once, and what the folder holds afterwards
is valid: every .py compiles, index.json is whole or absent, ``framescope report`` works.

The scenarios live in benchmarks/dump_faults.py, which repeats the kills 100 times; here
each runs once and the kills three times.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import dump_faults  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.needs_subprocess]

needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="mounting a tmpfs needs root")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    pytest.importorskip("torch")
    work = tmp_path_factory.mktemp("faults")
    program = dump_faults.write_program(work)
    return work, program, dump_faults.plain_result(program, work)


def assert_ok(outcome: dump_faults.Outcome) -> None:
    assert outcome.ok, outcome


@needs_root
def test_a_read_only_folder_warns_once_and_the_program_goes_on(setup):
    work, program, expected = setup
    outcome = dump_faults.on_mount(program, work, expected, "read-only", "1m", read_only=True)
    assert_ok(outcome)
    assert outcome.warnings == 1 and "Read-only file system" in outcome.stderr, outcome.stderr
    assert "the dump stops writing there and the program goes on unchanged" in outcome.stderr


@needs_root
@pytest.mark.parametrize("size", dump_faults.FULL_SIZES)
def test_a_disk_that_fills_up_leaves_valid_files(setup, size):
    work, program, expected = setup
    outcome = dump_faults.on_mount(program, work, expected, "full-" + size, size, read_only=False)
    assert_ok(outcome)
    assert outcome.warnings == 1 and "No space left on device" in outcome.stderr, outcome.stderr
    assert outcome.report == "ok" and outcome.files >= 1


def test_a_folder_deleted_mid_run_is_not_made_again(setup):
    work, program, expected = setup
    outcome = dump_faults.deleted(program, work, expected)
    assert_ok(outcome)
    assert outcome.report == "folder gone"
    assert outcome.warnings == 1 and "the folder was deleted or replaced while the program ran" in outcome.stderr


def test_a_blocked_index_leaves_the_other_files_and_a_report(setup):
    work, program, expected = setup
    outcome = dump_faults.blocked(program, work, expected)
    assert_ok(outcome)
    assert outcome.warnings == 1 and "index.json not written" in outcome.stderr, outcome.stderr
    assert outcome.files > 10 and outcome.report == "ok"
    assert outcome.missing.startswith("index.json is missing"), outcome.missing
    assert (work / "blocked-dump" / "index.md").is_file()


def test_sigkill_at_random_moments_leaves_valid_files(setup):
    work, program, _expected = setup
    # Kills in the first half of a run's span, so that a run slower than the timing run is
    # still running when its moment comes (benchmarks/dump_faults.py draws from all of it).
    window = dump_faults.kill_window(program, work) / 2
    outcomes = [dump_faults.killed(program, work, number, seed=0, window_s=window) for number in range(3)]
    for outcome in outcomes:
        assert_ok(outcome)  # only a folder without a .py file may be no dump
        assert outcome.exit_status == (-9 if outcome.killed else 0)
        if outcome.started or not outcome.killed:  # killed once files were there, or not killed
            assert outcome.report == "ok" and outcome.files >= 1, outcome
        if not outcome.killed:
            assert outcome.index == "valid", outcome
    # On a busy machine a run can end before its moment came: most must be real kills, and
    # one must come after the dump began writing, so that a partial dump was looked at.
    assert sum(outcome.killed for outcome in outcomes) >= 2, outcomes
    assert any(outcome.killed and outcome.started for outcome in outcomes), outcomes


def test_keyboard_interrupt_in_a_compile_ends_the_program_as_without_framescope(setup):
    work, program, _expected = setup
    outcome = dump_faults.interrupted(program, work)
    assert_ok(outcome)
    assert outcome.warnings == 0
