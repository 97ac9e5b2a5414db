"""grep-tool: recursive POSIX ERE search; hidden, symlinked, ignored, binary, special files skip."""

from __future__ import annotations

import os
import subprocess
import time

import pytest


def grep(run_tool, cwd, pattern, **args):
    """Run the installed grep-tool and return its result object."""
    run = run_tool("grep", {"pattern": pattern, **args}, cwd=cwd)
    assert run.returncode == 0, run.stderr
    return run.result


def lines(result):
    """The output lines of a grep result."""
    return result["output"].split("\n") if result["output"] else []


def write(root, name, text):
    """Write ``root/name`` (str or bytes), creating directories."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


@pytest.fixture
def src(tmp_path):
    """The seed's example: ``src/main.c`` and ``src/util.c`` with TODOs, plus a header."""
    write(tmp_path, "src/main.c", "int main;\n" * 41 + "// TODO: implement error handling\n")
    write(tmp_path, "src/util.c", "x\n" * 14 + "// TODO: optimize this\n")
    write(tmp_path, "src/util.h", "// TODO: in a header\n")
    return tmp_path


def test_seed_example(run_tool, src):
    assert grep(run_tool, src, "TODO", glob="*.c", path="src") == {
        "output": "src/main.c:42: // TODO: implement error handling\n"
        "src/util.c:15: // TODO: optimize this",
        "count": 2,
    }


@pytest.mark.parametrize("given", [{}, {"path": ""}, {"path": "."}])
def test_omitted_or_empty_path_is_exactly_the_current_directory(run_tool, src, given):
    found = lines(grep(run_tool, src, "TODO: in", **given))
    assert found == ["./src/util.h:1: // TODO: in a header"]


def test_absolute_path(run_tool, src):
    found = lines(grep(run_tool, "/", "header", path=str(src)))
    assert found == [f"{src}/src/util.h:1: // TODO: in a header"]


def test_no_matches_is_empty_not_an_error(run_tool, src):
    assert grep(run_tool, src, "nothing-like-this") == {"output": "", "count": 0}


def test_missing_path_matches_nothing(run_tool, src):
    assert grep(run_tool, src, "TODO", path="no/such/dir") == {"output": "", "count": 0}


def test_path_may_be_a_single_file(run_tool, src):
    assert grep(run_tool, src, "TODO", path="src/util.h")["count"] == 1


def test_searches_recursively_sorted_by_file_then_line(run_tool, tmp_path):
    write(tmp_path, "b.txt", "hit 1\nmiss\nhit 3\n")
    write(tmp_path, "a/z.txt", "hit\n")
    write(tmp_path, "a.txt", "hit\n")
    assert lines(grep(run_tool, tmp_path, "hit")) == [
        "./a.txt:1: hit", "./a/z.txt:1: hit", "./b.txt:1: hit 1", "./b.txt:3: hit 3",
    ]


def test_single_match_without_trailing_newline(run_tool, tmp_path):
    write(tmp_path, "f", "first\nlast line")
    assert grep(run_tool, tmp_path, "last") == {"output": "./f:2: last line", "count": 1}


def test_a_line_with_several_matches_is_reported_once(run_tool, tmp_path):
    write(tmp_path, "f", "a a a\nb\n")
    assert grep(run_tool, tmp_path, "a") == {"output": "./f:1: a a a", "count": 1}


def test_empty_pattern_matches_every_line(run_tool, tmp_path):
    write(tmp_path, "f", "one\n\nthree\n")
    assert lines(grep(run_tool, tmp_path, "")) == ["./f:1: one", "./f:2: ", "./f:3: three"]


def test_empty_file_has_no_lines(run_tool, tmp_path):
    write(tmp_path, "f", "")
    assert grep(run_tool, tmp_path, "^") == {"output": "", "count": 0}


def test_anchors_are_per_line(run_tool, tmp_path):
    write(tmp_path, "f", "start here\nnot start\nends\n")
    assert lines(grep(run_tool, tmp_path, "^start")) == ["./f:1: start here"]
    assert lines(grep(run_tool, tmp_path, "start$")) == ["./f:2: not start"]
    assert lines(grep(run_tool, tmp_path, "^$")) == []


def test_very_long_line_is_returned_whole(run_tool, tmp_path):
    long_line = "x" * 200_000 + " NEEDLE " + "y" * 200_000
    write(tmp_path, "f", "short\n" + long_line + "\n")
    assert grep(run_tool, tmp_path, "NEEDLE") == {"output": f"./f:2: {long_line}", "count": 1}


@pytest.mark.parametrize(
    "glob, expected",
    [
        ("*.c", ["./src/main.c", "./src/util.c"]),
        ("util.*", ["./src/util.c", "./src/util.h"]),
        ("src/*.h", ["./src/util.h"]),
        ("**/*.h", ["./src/util.h"]),
        ("*.nothing", []),
        ("", ["./src/main.c", "./src/util.c", "./src/util.h"]),
    ],
)
def test_glob_filters_files(run_tool, src, glob, expected):
    found = [line.split(":")[0] for line in lines(grep(run_tool, src, "TODO", glob=glob))]
    assert found == expected


def test_glob_with_slash_is_relative_to_path(run_tool, src):
    write(src, "src/sub/util.h", "TODO deep\n")
    result = grep(run_tool, src, "TODO", glob="sub/*.h", path="src")
    found = [line.split(":")[0] for line in lines(result)]
    assert found == ["src/sub/util.h"]


def test_hidden_files_and_directories_are_skipped(run_tool, tmp_path):
    write(tmp_path, ".env", "secret\n")
    write(tmp_path, ".git/config", "secret\n")
    write(tmp_path, "visible", "secret\n")
    assert lines(grep(run_tool, tmp_path, "secret")) == ["./visible:1: secret"]


def test_symlinks_are_skipped(run_tool, tmp_path):
    real = write(tmp_path, "real/file.txt", "needle\n")
    (tmp_path / "link.txt").symlink_to(real)
    (tmp_path / "linkdir").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "loop").symlink_to(tmp_path)
    assert lines(grep(run_tool, tmp_path, "needle")) == ["./real/file.txt:1: needle"]


def test_binary_files_are_skipped_after_the_first_8_kib(run_tool, tmp_path):
    write(tmp_path, "binary", b"needle\x00\n")
    write(tmp_path, "late-nul", b"needle\n" + b"x" * 9000 + b"\x00\n")
    assert lines(grep(run_tool, tmp_path, "needle")) == ["./late-nul:1: needle"]


def test_invalid_utf8_is_replaced(run_tool, tmp_path):
    write(tmp_path, "latin1", "caf\xe9 needle\n".encode("latin-1"))
    assert lines(grep(run_tool, tmp_path, "needle")) == ["./latin1:1: caf\ufffd needle"]


def test_fifo_is_skipped_without_hanging(run_tool, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    write(tmp_path, "file", "needle\n")
    started = time.monotonic()
    assert lines(grep(run_tool, tmp_path, "needle")) == ["./file:1: needle"]
    assert time.monotonic() - started < 15


def test_unreadable_files_and_directories_are_skipped(run_tool, unprivileged, tmp_path):
    write(tmp_path, "ok.txt", "needle\n")
    write(tmp_path, "secret.txt", "needle\n").chmod(0o000)
    write(tmp_path, "closed/inner.txt", "needle\n")
    (tmp_path / "closed").chmod(0o000)
    try:
        run = _run_as(run_tool, unprivileged, tmp_path)
    finally:
        (tmp_path / "closed").chmod(0o755)
    assert run.result == {"output": "./ok.txt:1: needle", "count": 1}


def _run_as(run_tool, wrapper, cwd):
    return run_tool("grep", {"pattern": "needle"}, cwd=cwd, wrapper=wrapper)


def test_gitignore_patterns(run_tool, tmp_path):
    write(tmp_path, ".gitignore", "# comment\n*.log\nbuild/\n/top.txt\n!keep.log\ndocs/**/*.tmp\n")
    for name in [
        "app.log", "keep.log", "sub/deep.log", "build/out.txt", "sub/build/x.txt",
        "top.txt", "sub/top.txt", "docs/a/b/c.tmp", "main.c",
    ]:
        write(tmp_path, name, "needle\n")
    found = [line.split(":")[0] for line in lines(grep(run_tool, tmp_path, "needle"))]
    assert found == ["./keep.log", "./main.c", "./sub/top.txt"]


def test_nested_gitignore_applies_below_its_directory(run_tool, tmp_path):
    write(tmp_path, "sub/.gitignore", "*.txt\n")
    write(tmp_path, "sub/a.txt", "needle\n")
    write(tmp_path, "a.txt", "needle\n")
    assert [line.split(":")[0] for line in lines(grep(run_tool, tmp_path, "needle"))] == ["./a.txt"]


def test_gitignore_of_the_repository_above_path_applies(run_tool, tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path, ".gitignore", "/src/generated/\n")
    write(tmp_path, "src/generated/g.c", "needle\n")
    write(tmp_path, "src/main.c", "needle\n")
    assert lines(grep(run_tool, tmp_path, "needle", path="src")) == ["src/main.c:1: needle"]


def test_an_empty_dot_git_is_no_repository_top(run_tool, tmp_path):
    """The sandbox's placeholder (an empty ``.git``) in a subfolder: the repository's rules
    above it still apply, as git itself looks further up."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path, ".gitignore", "/src/generated/\n")
    (tmp_path / "src" / ".git").mkdir(parents=True)
    write(tmp_path, "src/generated/g.c", "needle\n")
    write(tmp_path, "src/main.c", "needle\n")
    assert lines(grep(run_tool, tmp_path, "needle", path="src")) == ["src/main.c:1: needle"]


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("[[:digit:]]+ apples", ["./f:1: 12 apples"]),
        ("^[[:alpha:]]+$", ["./f:2: Pears"]),
        ("[[:space:]]tab", ["./f:3: a\ttab"]),
        ("(Pears|plums)", ["./f:2: Pears", "./f:4: plums?"]),
        ("plums\\?", ["./f:4: plums?"]),
        ("p.ums?", ["./f:4: plums?"]),
        ("1{2}", []),
        ("2{1} a", ["./f:1: 12 apples"]),
        ("\\<tab\\>", ["./f:3: a\ttab"]),
        ("*star", ["./f:5: *star"]),
        ("[^[:alnum:][:space:]]", ["./f:4: plums?", "./f:5: *star"]),
    ],
)
def test_posix_extended_regular_expressions(run_tool, tmp_path, pattern, expected):
    write(tmp_path, "f", "12 apples\nPears\na\ttab\nplums?\n*star\n")
    assert lines(grep(run_tool, tmp_path, pattern)) == expected


@pytest.mark.parametrize(
    "pattern, reason",
    [("(", "Unmatched ( or \\("), ("a)", "Unmatched ) or \\)"), ("[abc", "unterminated [")],
)
def test_invalid_regex(run_tool, tmp_path, pattern, reason):
    assert grep(run_tool, tmp_path, pattern) == {
        "error": f"Invalid pattern: {reason}",
        "error_code": "INVALID_PATTERN",
    }


@pytest.mark.parametrize("pattern", ["a{3,1}", "\\b{2}", "x\\<*"])
def test_invalid_regex_reported_by_python(run_tool, tmp_path, pattern):
    """Invalid to Python's re: an error, also where ripgrep would take the pattern."""
    write(tmp_path, "f", "xx b\n")
    result = grep(run_tool, tmp_path, pattern)
    assert result["error_code"] == "INVALID_PATTERN"
    assert result["error"].startswith("Invalid pattern: ")


def test_budget_keeps_total_count(run_tool, tmp_path):
    write(tmp_path, "f", "".join(f"match {n}\n" for n in range(5000)))
    env = {"IKIGAI_MAX_OUTPUT_BYTES": "4096"}
    run = run_tool("grep", {"pattern": "match"}, cwd=tmp_path, env=env)
    assert len(run.stdout) <= 4096
    assert run.result["count"] == 5000
    assert run.result["output"].startswith("./f:1: match 0\n")
    assert run.result["output"].endswith("./f:5000: match 4999")
    assert run.result["truncated"]["kept_bytes"] >= 2048


def test_huge_file_is_searched_in_blocks_with_right_line_numbers(run_tool, tmp_path):
    line = "filler " * 20 + "\n"
    count = (40 << 20) // len(line)
    write(tmp_path, "big", line * count + "needle\n")
    assert grep(run_tool, tmp_path, "needle") == {"output": f"./big:{count + 1}: needle", "count": 1}


@pytest.mark.parametrize("engine", [{}, {"IKIGAI_RIPGREP": ""}], ids=["ripgrep", "python"])
def test_budget_reads_the_start_and_the_end_but_not_the_middle(run_tool, tmp_path, engine):
    for n in range(200):
        write(tmp_path, f"f{n:03d}", "".join(f"match {i}\n" for i in range(100)))
    env = {"IKIGAI_MAX_OUTPUT_BYTES": "4096", **engine}
    run = run_tool("grep", {"pattern": "match"}, cwd=tmp_path, env=env)
    assert len(run.stdout) <= 4096
    assert run.result["output"].startswith("./f000:1: match 0\n")
    assert run.result["output"].endswith("./f199:100: match 99")
    shown = run.result["output"].count("\n")
    assert shown < run.result["count"] < 20000  # a lower bound: the middle files were skipped
    assert run.result["truncated"]["total_bytes"] < 20000 * len("./f000:1: match 0\n")
