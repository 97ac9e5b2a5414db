"""file-write-tool: atomic create/overwrite, mode/owner/symlink kept, every error code."""

from __future__ import annotations

import os
import stat

import pytest


def write(run_tool, cwd, path, content, **kwargs):
    """Run the installed file-write-tool and return its result object."""
    run = run_tool("file-write", {"file_path": str(path), "content": content}, cwd=cwd, **kwargs)
    assert run.returncode == 0, run.stderr
    return run.result


def leftovers(directory):
    """Names in ``directory`` that look like our temporary files."""
    return [name for name in os.listdir(directory) if name.endswith(".tmp")]


def test_creates_file_and_reports_bytes(run_tool, tmp_path):
    result = write(run_tool, tmp_path, "test.txt", "Hello, world!\n")
    assert result == {"output": "Wrote 14 bytes to test.txt", "bytes": 14}
    assert (tmp_path / "test.txt").read_text() == "Hello, world!\n"


def test_bytes_counts_utf8(run_tool, tmp_path):
    assert write(run_tool, tmp_path, "u.txt", "héllo 😀")["bytes"] == len("héllo 😀".encode())


def test_message_names_the_basename_only(run_tool, tmp_path):
    (tmp_path / "sub").mkdir()
    result = write(run_tool, "/", tmp_path / "sub" / "deep.txt", "x")
    assert result["output"] == "Wrote 1 bytes to deep.txt"


def test_empty_content_creates_empty_file(run_tool, tmp_path):
    result = write(run_tool, tmp_path, "empty", "")
    assert result == {"output": "Wrote 0 bytes to empty", "bytes": 0}
    assert (tmp_path / "empty").read_bytes() == b""


def test_existing_file_is_overwritten(run_tool, tmp_path):
    (tmp_path / "f").write_text("a much longer old content\n")
    write(run_tool, tmp_path, "f", "new\n")
    assert (tmp_path / "f").read_text() == "new\n"
    assert leftovers(tmp_path) == []


def test_binary_like_content_is_written_as_is(run_tool, tmp_path):
    write(run_tool, tmp_path, "b", "\x00\x01\x7f\n")
    assert (tmp_path / "b").read_bytes() == b"\x00\x01\x7f\n"


def test_missing_parent_directory_is_open_failed(run_tool, tmp_path):
    assert write(run_tool, tmp_path, "nonexistent/dir/file.txt", "x") == {
        "error": "Cannot open file: nonexistent/dir/file.txt",
        "error_code": "OPEN_FAILED",
    }


def test_directory_is_open_failed(run_tool, tmp_path):
    (tmp_path / "d").mkdir()
    assert write(run_tool, tmp_path, "d", "x")["error_code"] == "OPEN_FAILED"


def test_device_is_refused_and_left_alone(run_tool, tmp_path):
    assert write(run_tool, tmp_path, "/dev/null", "x") == {
        "error": "Cannot open file: /dev/null",
        "error_code": "OPEN_FAILED",
    }
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_read_only_file_is_permission_denied_and_intact(run_tool, unprivileged, tmp_path):
    target = tmp_path / "ro.txt"
    target.write_text("keep\n")
    target.chmod(0o444)
    result = write(run_tool, tmp_path, "ro.txt", "x", wrapper=unprivileged)
    assert result == {"error": "Permission denied: ro.txt", "error_code": "PERMISSION_DENIED"}
    assert target.read_text() == "keep\n"


def test_read_only_directory_is_permission_denied(run_tool, unprivileged, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        result = write(run_tool, tmp_path, "locked/new.txt", "x", wrapper=unprivileged)
    finally:
        locked.chmod(0o755)
    assert result["error_code"] == "PERMISSION_DENIED"
    assert os.listdir(locked) == []


def test_mode_is_kept(run_tool, tmp_path):
    target = tmp_path / "script.sh"
    target.write_text("old")
    target.chmod(0o751)
    write(run_tool, tmp_path, "script.sh", "#!/bin/sh\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_owner_is_kept(run_tool, tmp_path):
    target = tmp_path / "owned"
    target.write_text("old")
    os.chown(target, 1234, 2345)
    write(run_tool, tmp_path, "owned", "new")
    assert (target.stat().st_uid, target.stat().st_gid) == (1234, 2345)


def test_new_file_gets_0666_minus_umask(run_tool, tmp_path):
    write(run_tool, tmp_path, "new", "x", wrapper=("sh", "-c", 'umask 027; exec "$0"'))
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o640


def test_symlink_stays_a_symlink_and_its_target_is_written(run_tool, tmp_path):
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link").symlink_to("real.txt")
    assert write(run_tool, tmp_path, "link", "new")["output"] == "Wrote 3 bytes to link"
    assert (tmp_path / "link").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new"


def test_dangling_symlink_creates_its_target(run_tool, tmp_path):
    (tmp_path / "link").symlink_to("target.txt")
    write(run_tool, tmp_path, "link", "made")
    assert (tmp_path / "link").is_symlink()
    assert (tmp_path / "target.txt").read_text() == "made"


def test_full_disk_is_no_space_and_keeps_old_content(run_tool, tiny_fs):
    (tiny_fs / "f.txt").write_text("old content\n")
    result = write(run_tool, tiny_fs, "f.txt", "x" * (256 << 10))
    assert result == {"error": "No space left on device: f.txt", "error_code": "NO_SPACE"}
    assert (tiny_fs / "f.txt").read_text() == "old content\n"
    assert os.listdir(tiny_fs) == ["f.txt"]


def test_failed_rename_is_write_failed_and_leaves_nothing(run_tool, busy_file):
    result = write(run_tool, busy_file.parent, "f", "new")
    assert result == {"error": "Failed to write file: f", "error_code": "WRITE_FAILED"}
    assert busy_file.read_text() == "old content\n"
    assert leftovers(busy_file.parent) == []
