"""file-read-tool: whole files, line windows, special files, errors, the output budget."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

from tests.tools.conftest import BIN


def read(run_tool, cwd, **args):
    """Run the installed file-read-tool and return its result object."""
    run = run_tool("file-read", args, cwd=cwd)
    assert run.returncode == 0, run.stderr
    return run.result


@pytest.fixture
def lines(tmp_path):
    """A five-line file ``lines.txt``."""
    (tmp_path / "lines.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    return tmp_path


def test_reads_whole_file_exactly(run_tool, tmp_path):
    (tmp_path / "hostname").write_text("myserver.example.com\n")
    assert read(run_tool, tmp_path, file_path="hostname") == {"output": "myserver.example.com\n"}


def test_absolute_path(run_tool, lines):
    path = str(lines / "lines.txt")
    assert read(run_tool, "/", file_path=path)["output"].startswith("one\n")


def test_empty_file(run_tool, tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    assert read(run_tool, tmp_path, file_path="empty") == {"output": ""}


def test_offset_and_limit_select_lines(run_tool, lines):
    result = read(run_tool, lines, file_path="lines.txt", offset=2, limit=2)
    assert result == {"output": "two\nthree\n"}


def test_offset_without_limit_reads_to_the_end(run_tool, lines):
    assert read(run_tool, lines, file_path="lines.txt", offset=4) == {"output": "four\nfive\n"}


def test_limit_without_offset_starts_at_line_1(run_tool, lines):
    assert read(run_tool, lines, file_path="lines.txt", limit=1) == {"output": "one\n"}


def test_offset_beyond_end_is_empty_not_an_error(run_tool, lines):
    assert read(run_tool, lines, file_path="lines.txt", offset=99) == {"output": ""}


def test_limit_zero_is_empty(run_tool, lines):
    assert read(run_tool, lines, file_path="lines.txt", offset=2, limit=0) == {"output": ""}


def test_offset_zero_reads_from_line_1(run_tool, lines):
    assert read(run_tool, lines, file_path="lines.txt", offset=0, limit=1) == {"output": "one\n"}


def test_negative_limit_is_an_invalid_invocation(run_tool, lines):
    run = run_tool("file-read", {"file_path": "lines.txt", "limit": -1}, cwd=lines)
    assert run.returncode == 1
    assert "field 'limit' must not be negative" in run.stderr


def test_last_line_without_newline_is_kept(run_tool, tmp_path):
    (tmp_path / "f").write_text("a\nb")
    assert read(run_tool, tmp_path, file_path="f", offset=2) == {"output": "b"}


def test_symlink_is_followed(run_tool, lines):
    (lines / "link").symlink_to("lines.txt")
    assert read(run_tool, lines, file_path="link", limit=1) == {"output": "one\n"}


def test_binary_content_becomes_valid_json(run_tool, tmp_path):
    (tmp_path / "bin").write_bytes(bytes(range(256)))
    output = read(run_tool, tmp_path, file_path="bin")["output"]
    assert output[:128] == "".join(map(chr, range(128)))
    assert set(output[128:]) == {"\ufffd"}


def test_text_with_nul_and_controls_round_trips_through_file_write(run_tool, tmp_path):
    content = "nul\x00bell\x07tab\tquote\"back\\slash é 😀\n"
    assert run_tool("file-write", {"file_path": "f", "content": content}, cwd=tmp_path).result
    assert read(run_tool, tmp_path, file_path="f") == {"output": content}


def test_missing_file(run_tool, tmp_path):
    assert read(run_tool, tmp_path, file_path="missing.txt") == {
        "error": "File not found: missing.txt",
        "error_code": "FILE_NOT_FOUND",
    }


def test_permission_denied(run_tool, unprivileged, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("x")
    secret.chmod(0o000)
    run = run_tool("file-read", {"file_path": str(secret)}, wrapper=unprivileged)
    assert run.result == {
        "error": f"Permission denied: {secret}",
        "error_code": "PERMISSION_DENIED",
    }


def test_directory_is_refused(run_tool, tmp_path):
    (tmp_path / "dir").mkdir()
    assert read(run_tool, tmp_path, file_path="dir") == {
        "error": "Cannot open file: dir",
        "error_code": "OPEN_FAILED",
    }


def test_path_through_a_file_is_open_failed(run_tool, lines):
    assert read(run_tool, lines, file_path="lines.txt/x")["error_code"] == "OPEN_FAILED"


def test_symlink_loop_is_open_failed(run_tool, tmp_path):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    assert read(run_tool, tmp_path, file_path="a") == {
        "error": "Cannot open file: a",
        "error_code": "OPEN_FAILED",
    }


def test_fifo_is_refused_without_hanging(run_tool, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    started = time.monotonic()
    assert read(run_tool, tmp_path, file_path="fifo") == {
        "error": "Cannot seek file: fifo",
        "error_code": "SEEK_FAILED",
    }
    assert time.monotonic() - started < 15


def test_dev_zero_is_refused_without_reading(run_tool, tmp_path):
    assert read(run_tool, tmp_path, file_path="/dev/zero") == {
        "error": "Cannot get file size: /dev/zero",
        "error_code": "SIZE_FAILED",
    }


def test_read_error_is_read_failed(run_tool, tmp_path):
    # /proc/self/mem is a regular file whose first page cannot be read (EIO).
    assert read(run_tool, tmp_path, file_path="/proc/self/mem") == {
        "error": "Failed to read file: /proc/self/mem",
        "error_code": "READ_FAILED",
    }


def _budgeted(run_tool, cwd, budget, **args):
    run = run_tool("file-read", args, cwd=cwd, env={"IKIGAI_MAX_OUTPUT_BYTES": str(budget)})
    assert run.returncode == 0
    assert len(run.stdout) <= budget
    return run.result


def test_budget_truncates_and_says_where_to_continue(run_tool, tmp_path):
    text = "".join(f"line {n}\n" for n in range(1, 20001))
    (tmp_path / "big").write_text(text)
    result = _budgeted(run_tool, tmp_path, 4096, file_path="big")
    output = result["output"]
    assert output.startswith("line 1\nline 2\n")
    assert output.endswith("line 19999\nline 20000\n")
    assert result["truncated"]["total_bytes"] == len(text)
    assert result["truncated"]["kept_bytes"] >= 2048
    offset = int(re.search(r"call file_read with offset=(\d+)", output).group(1))
    head = output.split("[... truncated")[0]
    assert head.endswith(f"line {offset - 1}\n")
    after = _budgeted(run_tool, tmp_path, 4096, file_path="big", offset=offset, limit=1)
    assert after == {"output": f"line {offset}\n"}


def test_budget_with_offset_counts_lines_from_the_offset(run_tool, tmp_path):
    (tmp_path / "big").write_text("".join(f"line {n}\n" for n in range(1, 20001)))
    result = _budgeted(run_tool, tmp_path, 2048, file_path="big", offset=100, limit=5000)
    output = result["output"]
    assert output.startswith("line 100\n")
    assert output.endswith("line 5099\n")
    offset = int(re.search(r"offset=(\d+)", output).group(1))
    assert output.split("[... truncated")[0].endswith(f"line {offset - 1}\n")


def test_huge_sparse_file_reads_only_head_and_tail(run_tool, tmp_path):
    size = 8 << 30
    with open(tmp_path / "huge", "wb") as file:
        file.write(b"START\n")
        file.seek(size - 4)
        file.write(b"END\n")
    started = time.monotonic()
    result = _budgeted(run_tool, tmp_path, 8192, file_path="huge")
    assert time.monotonic() - started < 20
    assert result["output"].startswith("START\n")
    assert result["output"].endswith("END\n")
    assert result["truncated"]["total_bytes"] == size


def test_line_window_of_a_large_file_streams_in_bounded_memory(tmp_path):
    big = tmp_path / "big"
    with open(big, "wb") as file:
        file.write(b"first\n")
        file.truncate(300 << 20)  # 300 MB of NUL bytes on one line after "first"
    exe = BIN / "file-read-tool"
    if not exe.exists():
        pytest.skip(f"{exe} is not installed")
    probe = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run([sys.argv[1]], input=sys.argv[2].encode(), capture_output=True,"
        " env={'IKIGAI_MAX_OUTPUT_BYTES': '8192'})\n"
        "print(len(p.stdout), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    args = json.dumps({"file_path": str(big), "offset": 2, "limit": 1})
    out = subprocess.run(
        [sys.executable, "-c", probe, str(exe), args], capture_output=True, text=True
    )
    length, max_rss_kib = map(int, out.stdout.split())
    assert 0 < length <= 8192
    assert max_rss_kib < 100 * 1024
