"""glob-tool: POSIX wildcards plus ``**``, files only, sorted bytewise, hidden and loops handled."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ikigai_tools_builtin import glob_tool
from ikigai_tools_builtin._budget import dump, fit
from ikigai_tools_builtin._protocol import respond


def glob(run_tool, cwd, pattern, path=None, **kwargs):
    """Run the installed glob-tool and return its result object."""
    args = {"pattern": pattern} if path is None else {"pattern": pattern, "path": str(path)}
    run = run_tool("glob", args, cwd=cwd, **kwargs)
    assert run.returncode == 0, run.stderr
    return run.result


def listed(result):
    """The paths of a glob result."""
    return result["output"].split("\n") if result["output"] else []


@pytest.fixture
def tree(tmp_path):
    """A small project tree with hidden entries, a FIFO and symlinks."""
    for name in [
        "file1.txt", "file2.txt", "notes.txt", "B.txt", "a.txt", "a/b.txt", "a/c.md",
        "src/main.c", "src/util.c", "src/lib/deep/x.c", "src/lib/y.h",
        ".hidden.txt", ".config/settings.txt", "src/.cache/z.c",
    ]:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    os.mkfifo(tmp_path / "pipe.txt")
    (tmp_path / "link.txt").symlink_to("notes.txt")
    (tmp_path / "dangling.txt").symlink_to("nowhere")
    (tmp_path / "dir.txt").mkdir()
    return tmp_path


def test_seed_example_with_absolute_path(run_tool, tree):
    result = glob(run_tool, "/", "file*.txt", tree)
    assert result == {"output": f"{tree}/file1.txt\n{tree}/file2.txt", "count": 2}


def test_relative_pattern_gives_relative_paths(run_tool, tree):
    assert listed(glob(run_tool, tree, "src/*.c")) == ["src/main.c", "src/util.c"]


def test_path_is_joined_as_given(run_tool, tree):
    assert listed(glob(run_tool, tree, "*.c", "src")) == ["src/main.c", "src/util.c"]
    assert listed(glob(run_tool, tree, "*.c", "./src/")) == ["./src/main.c", "./src/util.c"]


def test_files_only_sorted_bytewise_without_fifos_dirs_or_dangling_links(run_tool, tree):
    assert listed(glob(run_tool, tree, "*.txt")) == [
        "B.txt", "a.txt", "file1.txt", "file2.txt", "link.txt", "notes.txt",
    ]


def test_bytewise_order_puts_dot_before_slash(run_tool, tree):
    assert listed(glob(run_tool, tree, "**/*.txt"))[:3] == ["B.txt", "a.txt", "a/b.txt"]


def test_no_matches_is_empty_not_an_error(run_tool, tree):
    assert glob(run_tool, tree, "*.nothing") == {"output": "", "count": 0}


def test_single_match_has_no_newline(run_tool, tree):
    assert glob(run_tool, tree, "B.txt") == {"output": "B.txt", "count": 1}


def test_pattern_without_wildcards_matches_exactly(run_tool, tree):
    assert glob(run_tool, tree, "src/lib/y.h") == {"output": "src/lib/y.h", "count": 1}
    assert glob(run_tool, tree, "src/lib/missing.h") == {"output": "", "count": 0}


def test_missing_search_directory_matches_nothing(run_tool, tree):
    assert glob(run_tool, tree, "*", "no/such/dir") == {"output": "", "count": 0}


def test_double_star_matches_any_depth_including_none(run_tool, tree):
    assert listed(glob(run_tool, tree, "src/**/*.c")) == [
        "src/lib/deep/x.c", "src/main.c", "src/util.c",
    ]


def test_trailing_double_star_lists_every_file_below(run_tool, tree):
    assert listed(glob(run_tool, tree, "src/lib/**")) == ["src/lib/deep/x.c", "src/lib/y.h"]


def test_dotfiles_are_hidden_from_wildcards(run_tool, tree):
    assert ".hidden.txt" not in listed(glob(run_tool, tree, "*"))
    assert "src/.cache/z.c" not in listed(glob(run_tool, tree, "**/*.c"))


def test_dotfiles_match_an_explicit_dot(run_tool, tree):
    assert listed(glob(run_tool, tree, ".*.txt")) == [".hidden.txt"]
    assert listed(glob(run_tool, tree, ".config/*")) == [".config/settings.txt"]


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("file?.txt", ["file1.txt", "file2.txt"]),
        ("file[12].txt", ["file1.txt", "file2.txt"]),
        ("file[!1].txt", ["file2.txt"]),
        ("[a-c].txt", ["a.txt"]),
        ("file[[:digit:]].txt", ["file1.txt", "file2.txt"]),
        ("a/*.[mt][dx]*", ["a/b.txt", "a/c.md"]),
        ("*/*.md", ["a/c.md"]),
    ],
)
def test_posix_wildcards(run_tool, tree, pattern, expected):
    assert listed(glob(run_tool, tree, pattern)) == expected


def test_escaped_wildcard_is_literal(run_tool, tmp_path):
    (tmp_path / "a*b").write_text("")
    (tmp_path / "axb").write_text("")
    assert listed(glob(run_tool, tmp_path, "a\\*b")) == ["a*b"]


def test_symlink_loops_terminate(run_tool, tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("")
    (tmp_path / "d" / "loop").symlink_to("..")
    (tmp_path / "self").symlink_to("self")
    assert listed(glob(run_tool, tmp_path, "**/*.txt")) == ["d/f.txt"]
    assert "d/loop/d/f.txt" in listed(glob(run_tool, tmp_path, "*/*/*/*.txt"))


def test_unreadable_subdirectory_is_skipped(run_tool, unprivileged, tree):
    (tree / "src" / "lib").chmod(0o000)
    try:
        result = glob(run_tool, tree, "**/*.c", wrapper=unprivileged)
    finally:
        (tree / "src" / "lib").chmod(0o755)
    assert listed(result) == ["src/main.c", "src/util.c"]


def test_unreadable_search_directory_is_read_error(run_tool, unprivileged, tree):
    (tree / "src").chmod(0o000)
    try:
        result = glob(run_tool, tree, "*.c", "src", wrapper=unprivileged)
    finally:
        (tree / "src").chmod(0o755)
    assert result == {"error": "Read error during glob", "error_code": "READ_ERROR"}


@pytest.mark.parametrize("pattern", ["", "file[12.txt", "bad\x00name"])
def test_invalid_pattern(run_tool, tree, pattern):
    assert glob(run_tool, tree, pattern) == {
        "error": "Invalid glob pattern",
        "error_code": "INVALID_PATTERN",
    }


def test_out_of_memory_is_reported(monkeypatch, tree):
    # Fault injection: a real MemoryError cannot be provoked reliably in a subprocess.
    def exhausted(start, parts, found):
        raise MemoryError

    monkeypatch.setattr(glob_tool, "_expand", exhausted)
    monkeypatch.chdir(tree)
    assert glob_tool.handle({"pattern": "**/*.c"}) == {
        "error": "Out of memory during glob",
        "error_code": "OUT_OF_MEMORY",
    }


def test_budget_keeps_count_of_all_matches(run_tool, tmp_path):
    for n in range(3000):
        (tmp_path / f"file{n:05d}.txt").write_text("")
    env = {"IKIGAI_MAX_OUTPUT_BYTES": "2048"}
    run = run_tool("glob", {"pattern": "*.txt"}, cwd=tmp_path, env=env)
    assert len(run.stdout) <= 2048
    assert run.result["count"] == 3000
    assert run.result["output"].startswith("file00000.txt\n")
    assert run.result["output"].endswith("file02999.txt")
    assert run.result["truncated"]["total_bytes"] == 3000 * 14 - 1


@pytest.mark.parametrize("pattern", ["**/*.txt", "**/a/**/*", "*/**/**/*", "*/*/*/*.txt", "**"])
def test_within_a_budget_the_ends_are_printed_as_the_whole_list_would_be(
        run_tool, tmp_path, pattern):
    """Only the ends of the sorted list are kept while globbing; the printed result is the
    same, ``count`` and ``total_bytes`` exact, and no file is listed twice."""
    for top in "abc":
        for middle in ("a", "b", "a/a", "a/b/a"):
            for n in range(30):
                path = tmp_path / top / middle / f"{n:02d}é.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("")
    whole = glob(run_tool, tmp_path, pattern)
    paths = listed(whole)
    assert len(paths) == len(set(paths)) == whole["count"] > 30
    cut = glob(run_tool, tmp_path, pattern, env={"IKIGAI_MAX_OUTPUT_BYTES": "1000"})
    assert cut == json.loads(dump(fit(whole, 1000)))
    assert cut["truncated"]["total_bytes"] == len(whole["output"].encode())


@pytest.fixture
def wide(tmp_path):
    """More directories than glob lists before it shares a ``**`` walk with a second process,
    with the names, hidden entries and symlinks both halves must treat alike."""
    for top in range(20):
        for sub in range(20):
            folder = tmp_path / f"d{top:02d}" / f"s{sub:02d}"
            folder.mkdir(parents=True)
            (folder / "x.py").write_text("")
            (folder / "y.txt").write_text("")
    (tmp_path / "d00" / ".hidden").mkdir()
    (tmp_path / "d00" / ".hidden" / "h.py").write_text("")
    (tmp_path / "d01" / "s01" / os.fsdecode(b"bad\xff.py")).write_text("")
    (tmp_path / "d02" / "link.py").symlink_to("s00/x.py")
    (tmp_path / "d03" / "dirlink").symlink_to("../d04", target_is_directory=True)
    return tmp_path


def _alone(monkeypatch, root, pattern, budget=None):
    """glob's result from one process: the reference for a shared walk."""
    monkeypatch.chdir(root)
    monkeypatch.setattr(glob_tool, "processors", lambda: 1)
    if budget:
        monkeypatch.setenv("IKIGAI_MAX_OUTPUT_BYTES", budget)
    return json.loads(dump(respond(glob_tool.handle, {"pattern": pattern})))


@pytest.mark.parametrize("budget", [None, "3000"])
def test_a_shared_walk_finds_what_one_process_finds(run_tool, monkeypatch, wide, budget):
    shared = glob(run_tool, wide, "**/*.py",
                  env={"IKIGAI_MAX_OUTPUT_BYTES": budget} if budget else None)
    alone = _alone(monkeypatch, wide, "**/*.py", budget)
    assert shared == alone
    assert shared["count"] == 20 * 20 + 2  # bad\xff.py, link.py; not .hidden nor dirlink


def test_a_walk_that_cannot_fork_is_walked_alone(monkeypatch, wide):
    tried = []

    def no_fork():
        tried.append(True)
        raise OSError("no more processes")

    expected = _alone(monkeypatch, wide, "**/*.py")
    monkeypatch.setattr(glob_tool, "processors", lambda: 2)
    monkeypatch.setattr(os, "fork", no_fork)
    assert json.loads(dump(respond(glob_tool.handle, {"pattern": "**/*.py"}))) == expected
    assert tried  # the tree is wide enough to share


def test_a_failed_child_s_half_is_walked_by_the_parent(monkeypatch, wide):
    script = ("import json; from ikigai_tools_builtin import glob_tool; "
              "glob_tool.processors = lambda: 2; glob_tool._send = lambda fd, found: 1 / 0; "
              "print(json.dumps(glob_tool.handle({'pattern': '**/*.py'})))")
    ran = subprocess.run([sys.executable, "-c", script], cwd=wide, capture_output=True,
                         timeout=60)
    assert ran.returncode == 0 and ran.stderr == b""
    assert json.loads(ran.stdout)["count"] == _alone(monkeypatch, wide, "**/*.py")["count"]
