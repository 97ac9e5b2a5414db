"""file-edit-tool: exact replacements, every error leaves the file untouched, locking, atomicity."""

from __future__ import annotations

import json
import os
import stat
import subprocess

import pytest

from tests.tools.conftest import BIN


def edit(run_tool, cwd, path, old, new, replace_all=None, **kwargs):
    """Run the installed file-edit-tool and return its result object."""
    args = {"file_path": str(path), "old_string": old, "new_string": new}
    if replace_all is not None:
        args["replace_all"] = replace_all
    run = run_tool("file-edit", args, cwd=cwd, **kwargs)
    assert run.returncode == 0, run.stderr
    return run.result


@pytest.fixture
def config(tmp_path):
    """``config.txt`` with one ``debug = false`` and three ``x``."""
    path = tmp_path / "config.txt"
    path.write_text("debug = false\nx x x\n")
    return path


def test_replaces_single_occurrence(run_tool, config):
    result = edit(run_tool, config.parent, "config.txt", "debug = false", "debug = true")
    assert result == {"output": "Replaced 1 occurrence in config.txt", "replacements": 1}
    assert config.read_text() == "debug = true\nx x x\n"


def test_replace_all_replaces_every_occurrence(run_tool, config):
    result = edit(run_tool, config.parent, "config.txt", "x", "y", replace_all=True)
    assert result == {"output": "Replaced 3 occurrences in config.txt", "replacements": 3}
    assert config.read_text() == "debug = false\ny y y\n"


def test_zero_matches_with_replace_all_succeeds_and_leaves_file_alone(run_tool, config):
    before = config.stat()
    result = edit(run_tool, config.parent, "config.txt", "absent", "y", replace_all=True)
    assert result == {"output": "Replaced 0 occurrences in config.txt", "replacements": 0}
    assert config.stat().st_ino == before.st_ino
    assert config.read_text() == "debug = false\nx x x\n"


def test_empty_new_string_deletes(run_tool, config):
    edit(run_tool, config.parent, "config.txt", " = false", "")
    assert config.read_text() == "debug\nx x x\n"


def test_multibyte_text(run_tool, tmp_path):
    (tmp_path / "u.txt").write_text("café ☕\n")
    edit(run_tool, tmp_path, "u.txt", "☕", "🍵")
    assert (tmp_path / "u.txt").read_text() == "café 🍵\n"


def test_binary_file_is_edited_on_raw_bytes(run_tool, tmp_path):
    data = b"\xff\x00head\xfe MARK \x80\x00tail"
    (tmp_path / "b.bin").write_bytes(data)
    edit(run_tool, tmp_path, "b.bin", "MARK", "DONE")
    assert (tmp_path / "b.bin").read_bytes() == data.replace(b"MARK", b"DONE")


@pytest.mark.parametrize(
    "old, new, replace_all, error, code",
    [
        ("absent", "y", None, "String not found in file", "NOT_FOUND"),
        ("x", "y", None, "String found 3 times, use replace_all to replace all", "NOT_UNIQUE"),
        ("x", "y", False, "String found 3 times, use replace_all to replace all", "NOT_UNIQUE"),
        ("x", "x", None, "old_string and new_string are identical", "INVALID_ARG"),
        ("x", "x", True, "old_string and new_string are identical", "INVALID_ARG"),
        ("", "y", None, "old_string cannot be empty", "INVALID_ARG"),
    ],
)
def test_refusals_leave_the_file_untouched(run_tool, config, old, new, replace_all, error, code):
    before = config.read_bytes(), config.stat().st_ino
    result = edit(run_tool, config.parent, "config.txt", old, new, replace_all)
    assert result == {"error": error, "error_code": code}
    assert (config.read_bytes(), config.stat().st_ino) == before


def test_missing_file(run_tool, tmp_path):
    assert edit(run_tool, tmp_path, "missing.txt", "a", "b") == {
        "error": "File not found: missing.txt",
        "error_code": "FILE_NOT_FOUND",
    }


def test_directory_is_open_failed(run_tool, tmp_path):
    (tmp_path / "d").mkdir()
    assert edit(run_tool, tmp_path, "d", "a", "b") == {
        "error": "Cannot open file: d",
        "error_code": "OPEN_FAILED",
    }


def test_fifo_is_open_failed_without_hanging(run_tool, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    assert edit(run_tool, tmp_path, "fifo", "a", "b")["error_code"] == "OPEN_FAILED"


def test_read_only_file_is_permission_denied(run_tool, unprivileged, config):
    config.chmod(0o444)
    result = edit(run_tool, config.parent, "config.txt", "debug", "DEBUG", wrapper=unprivileged)
    assert result == {"error": "Permission denied: config.txt", "error_code": "PERMISSION_DENIED"}
    assert config.read_text() == "debug = false\nx x x\n"


def test_mode_and_symlink_are_kept(run_tool, config):
    config.chmod(0o604)
    link = config.parent / "link"
    link.symlink_to("config.txt")
    assert edit(run_tool, config.parent, "link", "debug", "DEBUG")["output"] == (
        "Replaced 1 occurrence in link"
    )
    assert link.is_symlink()
    assert config.read_text().startswith("DEBUG")
    assert stat.S_IMODE(config.stat().st_mode) == 0o604


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_owner_is_kept(run_tool, config):
    os.chown(config, 1234, 2345)
    edit(run_tool, config.parent, "config.txt", "debug", "DEBUG")
    assert (config.stat().st_uid, config.stat().st_gid) == (1234, 2345)


def test_full_disk_is_no_space_and_keeps_the_original(run_tool, tiny_fs):
    target = tiny_fs / "f.txt"
    target.write_text("SEED\n" + "a" * 20000)
    result = edit(run_tool, tiny_fs, "f.txt", "a", "b" * 10, replace_all=True)
    assert result == {"error": "No space left on device: f.txt", "error_code": "NO_SPACE"}
    assert target.read_text() == "SEED\n" + "a" * 20000
    assert os.listdir(tiny_fs) == ["f.txt"]


def test_failed_rename_is_write_failed(run_tool, busy_file):
    result = edit(run_tool, busy_file.parent, "f", "old", "new")
    assert result == {"error": "Failed to write file: f", "error_code": "WRITE_FAILED"}
    assert busy_file.read_text() == "old content\n"
    assert os.listdir(busy_file.parent) == ["f"]


def test_concurrent_edits_are_all_applied_never_torn(tmp_path):
    exe = BIN / "file-edit-tool"
    if not exe.exists():
        pytest.skip(f"{exe} is not installed")
    target = tmp_path / "shared.txt"
    markers = [f"<marker {n:02d}>" for n in range(10)]
    target.write_text("".join(f"{m} {'filler ' * 2000}\n" for m in markers))
    procs = [
        subprocess.Popen([str(exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path)
        for _ in markers
    ]
    for proc, marker in zip(procs, markers, strict=True):
        args = {"file_path": "shared.txt", "old_string": marker, "new_string": marker.upper()}
        proc.stdin.write(json.dumps(args).encode())
        proc.stdin.close()
    results = [json.loads(proc.stdout.read()) for proc in procs]
    for proc in procs:
        proc.stdout.close()
        assert proc.wait(timeout=30) == 0
    assert all(result["replacements"] == 1 for result in results)
    expected = "".join(f"{m.upper()} {'filler ' * 2000}\n" for m in markers)
    assert target.read_text() == expected
    assert os.listdir(tmp_path) == ["shared.txt"]
