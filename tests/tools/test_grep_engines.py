"""grep-tool's two engines, ripgrep and Python, give the same answers on one corpus.

The corpus holds what the rules of decision 14 are about: ``.gitignore`` rules of every kind,
hidden and symlinked entries, binary files on both sides of the 8 KiB line, text that is not
UTF-8, names that sort differently as paths than as directory entries. Each case runs
``handle`` in this process with ripgrep and again without it.
"""

from __future__ import annotations

import json
import os

import pytest

from ikigai_tools_builtin import _ripgrep, grep_tool
from ikigai_tools_builtin._budget import budget, dump, fit

pytestmark = pytest.mark.skipif(_ripgrep.binary() is None, reason="ripgrep is not installed")

FILES: dict[str, bytes] = {
    ".gitignore": b"*.log\n!keep.log\nbuild/\n/top.txt\ndocs/**/*.tmp\n\\#hash\nsp\\ ace\n*.py[co]\n",
    "keep.log": b"needle kept\n",
    "app.log": b"needle ignored\n",
    "top.txt": b"needle top\n",
    "sub/top.txt": b"needle sub top\n",
    "build/out.c": b"needle built\n",
    "sub/build/x.c": b"needle built deep\n",
    "docs/a/b/c.tmp": b"needle tmp\n",
    "docs/a/b/c.txt": b"needle txt\n",
    "#hash": b"needle hash\n",
    "sp ace": b"needle space\n",
    "m.pyc": b"needle pyc\n",
    "nested/.gitignore": b"*.txt\n!want.txt\n",
    "nested/a.txt": b"needle nested\n",
    "nested/want.txt": b"needle wanted\n",
    "nested/deeper/b.txt": b"needle deeper\n",
    ".hidden": b"needle hidden\n",
    ".hiddendir/f.c": b"needle hidden dir\n",
    "foo.py": b"needle foo.py\n",
    "foo/bar.py": b"needle foo/bar.py\n",
    "foo-bar/x.py": b"needle foo-bar\n",
    "a: colon.txt": b"needle colon\n",
    "uni/\u00e9t\u00e9.txt": b"needle \xc3\xa9t\xc3\xa9\n",
    "early-nul": b"needle\x00\n",
    "nul-at-8191": b"needle\n" + b"x" * (8191 - 7) + b"\x00needle after\n",
    "nul-at-8192": b"needle\n" + b"x" * (8192 - 7) + b"\x00needle after\n",
    "late-nul": b"needle\n" + b"y\n" * 50000 + b"\x00\nneedle late\n",
    "nul-before-match": b"z\n" * 50000 + b"\x00\nneedle only late\n",
    "latin1": b"caf\xe9 needle\n\xff\xfe\n\xe9\n",
    "bom": b"\xef\xbb\xbfneedle bom\n",
    "utf16": "needle utf16\n".encode("utf-16"),
    "crlf": b"needle crlf\r\nend\r\n",
    "no-newline": b"first\nneedle last",
    "empty": b"",
    "long": b"x" * 200_000 + b" needle\n",
    "new\nline.txt": b"needle in a name with a newline\n",
    "ere.txt": (b"12 apples\nPears\na\ttab\nplums?\n*star\naaa\nab{2}\nx{\nTODO FIXME XXX\n"
                b"word_1 word-2\n\xce\xb1\xce\xb2\xce\xb3 greek\n(?i)\n[bracket]\nback\\slash\n"
                b"   \n"),
}
PATTERNS = [
    "needle", "^needle$", "needle$", "^$", "", ".", "^.$", "[^a-z]", "[[:digit:]]+ apples",
    "^[[:alpha:]]+$", "[[:space:]]tab", "(Pears|plums)", "plums\\?", "p.ums?", "a{2,}",
    "a{,2}b", "b\\{2\\}", "x{", "\\<word", "word\\>", "\\w-\\d", "\\W", "\\S\\s", "\\D",
    "*star", "a**", "(?i)", "[]x[]", "[[:punct:]]", "[^[:alnum:][:space:]]", "TODO|FIXME|XXX",
    "\u03b1\u03b2", "caf.", "^.{3}$", "back\\\\slash", "[\\]", "[[:upper:]][[:lower:]]",
    "[[:cntrl:]]", "^[^x]", "needle (kept|top)",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The corpus tree, with symlinks and a FIFO; its ``.gitignore`` rules apply (git repo)."""
    root = tmp_path_factory.mktemp("corpus")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")  # what makes it git's
    for name, data in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "link.txt").symlink_to(root / "keep.log")
    (root / "linkdir").symlink_to(root / "sub")
    os.mkfifo(root / "fifo")
    return root


def both(monkeypatch, cwd, args: dict, budget: str | None = None) -> dict:
    """``handle(args)`` in ``cwd`` with ripgrep and without; asserts they agree."""
    monkeypatch.chdir(cwd)
    if budget:
        monkeypatch.setenv("IKIGAI_MAX_OUTPUT_BYTES", budget)
    monkeypatch.delenv(_ripgrep.ENV_VAR, raising=False)
    fast = grep_tool.handle(dict(args))
    monkeypatch.setenv(_ripgrep.ENV_VAR, "")
    slow = grep_tool.handle(dict(args))
    monkeypatch.delenv(_ripgrep.ENV_VAR)
    assert _plain(fast) == _plain(slow), args
    return _plain(fast)


def _plain(result: dict) -> dict:
    """``result`` as the printed JSON carries it (a budgeted output: its kept text)."""
    return json.loads(dump(fit(result, budget())))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_patterns_agree(monkeypatch, corpus, pattern):
    both(monkeypatch, corpus, {"pattern": pattern})


@pytest.mark.parametrize("pattern", ["needle", ".", "e", "needle (kept|top)", "^$", "\\<word"])
@pytest.mark.parametrize("path", ["sub", "nested", "uni", lambda corpus: str(corpus / "sub")])
def test_ripgrep_answers_alone(monkeypatch, corpus, pattern, path):
    """What ripgrep can run ends there: no Python walk, no listing for Python. (Not at the
    corpus's top: the name holding a newline sends that to Python.)"""
    monkeypatch.chdir(corpus)
    base = path(corpus) if callable(path) else path
    expected = both(monkeypatch, corpus, {"pattern": pattern, "path": base})["count"]
    monkeypatch.setattr(grep_tool, "_compiled", lambda pattern: lambda text, pos=0: None)
    found = grep_tool._fast(_ripgrep.binary(), _ripgrep.rules(base), pattern, base, None, None)
    assert found is not None
    assert found[1] == expected


@pytest.mark.parametrize("path", [".", "./", "sub", "sub/", "./sub", "nested", "nested/",
                                  "uni", "foo", "build", "docs/a"])
def test_paths_agree(monkeypatch, corpus, path):
    result = both(monkeypatch, corpus, {"pattern": "needle", "path": path})
    assert result["count"] > 0


def test_absolute_path_agrees(monkeypatch, corpus):
    both(monkeypatch, corpus, {"pattern": "needle", "path": str(corpus)})


@pytest.mark.parametrize("glob", ["*.py", "*.txt", "foo/*.py", "**/*.c", "*", "[ab]*", "*.nomatch"])
def test_glob_filters_agree(monkeypatch, corpus, glob):
    both(monkeypatch, corpus, {"pattern": "needle", "glob": glob})


def test_the_corpus_answer(monkeypatch, corpus):
    """The rules themselves: what is searched and how it is shown."""
    found = both(monkeypatch, corpus, {"pattern": "needle"})["output"].split("\n")
    files = [line.split(":")[0].removeprefix("./") for line in found]
    assert "late-nul" in files and "nul-at-8192" in files and "nul-before-match" in files
    assert "early-nul" not in files and "nul-at-8191" not in files and "utf16" not in files
    for skipped in ("app.log", "top.txt", "build/out.c", "docs/a/b/c.tmp", "#hash", "sp ace",
                    "m.pyc", "nested/a.txt", "nested/deeper/b.txt", ".hidden", "link.txt"):
        assert skipped not in files
    assert files.index("foo-bar/x.py") < files.index("foo.py") < files.index("foo/bar.py")
    assert "./latin1:1: caf\ufffd needle" in found
    assert "./bom:1: \ufeffneedle bom" in found


@pytest.mark.parametrize("pattern", ["needle", ".", "e"])
def test_budgeted_results_agree(monkeypatch, corpus, pattern):
    result = both(monkeypatch, corpus, {"pattern": pattern}, budget="2048")
    assert len(dump(result)) <= 2048


@pytest.mark.parametrize("path", [".", "./", str, "sub", "nested/", "foo", "build", "docs/a"])
@pytest.mark.parametrize("glob", ["", "*.py", "foo/*.py", "**/*.c", "*.txt"])
def test_ripgrep_lists_the_files_python_walks(monkeypatch, corpus, path, glob):
    """Past the budget the files are listed by ``rg --files``: the ones Python would walk."""
    monkeypatch.chdir(corpus)
    base = str(corpus) if path is str else path
    wanted = grep_tool._file_filter(glob)
    flags = _ripgrep.rules(base)
    assert flags is not None
    listed = _ripgrep.files(_ripgrep.binary(), flags, base, wanted)
    assert listed == sorted(grep_tool._walk(base, wanted))


def test_a_budget_stops_ripgrep_and_searches_only_the_ends(monkeypatch, tmp_path):
    """Over the budget ``rg`` is stopped, ``rg --files`` lists the files, and Python searches
    the sorted list's ends only: the same answer as Python's walk."""
    for n in range(300):
        (tmp_path / f"{n:03d}").write_bytes(b"needle\n" * 50)
    listed = []
    files = _ripgrep.files
    monkeypatch.setattr(_ripgrep, "files", lambda *args: listed.append(args) or files(*args))
    result = both(monkeypatch, tmp_path, {"pattern": "needle"}, budget="4096")
    assert len(listed) == 1
    assert result["output"].startswith("./000:1: needle\n")
    assert result["output"].endswith("./299:50: needle")
    assert result["count"] < 300 * 50  # the middle files were never searched


def test_repository_rules_above_the_path_agree(monkeypatch, corpus):
    """The repository's rules above the search root apply (given to ripgrep as an ignore
    file, as they are in the current directory)."""
    monkeypatch.chdir(corpus)
    assert _ripgrep.rules("sub") == (*_ripgrep.RULES, "--ignore-file", ".gitignore")
    result = both(monkeypatch, corpus, {"pattern": "needle", "path": "sub"})
    assert [line.split(":")[0] for line in result["output"].split("\n")] == ["sub/top.txt"]
    absolute = both(monkeypatch, corpus, {"pattern": "needle", "path": str(corpus / "nested")})
    assert absolute["output"] == f"{corpus}/nested/want.txt:1: needle wanted"


@pytest.mark.parametrize("cwd, path", [("sub", "."), ("nested", "deeper"), ("nested", ".")])
def test_rules_elsewhere_than_the_current_directory_leave_it_to_python(
        monkeypatch, corpus, cwd, path):
    """Rules above the root in another folder, or two files above it: Python's walk."""
    monkeypatch.chdir(corpus / cwd)
    assert _ripgrep.rules(path) is None
    both(monkeypatch, corpus / cwd, {"pattern": "needle", "path": path})


def test_a_missing_binary_falls_back_to_python(monkeypatch, corpus, tmp_path):
    monkeypatch.chdir(corpus)
    monkeypatch.setenv(_ripgrep.ENV_VAR, str(tmp_path / "no-such-rg"))
    fast = _plain(grep_tool.handle({"pattern": "needle"}))
    monkeypatch.setenv(_ripgrep.ENV_VAR, "")
    assert fast == _plain(grep_tool.handle({"pattern": "needle"}))
    assert fast["count"] > 10


def test_back_references_are_searched_in_python(monkeypatch, corpus):
    result = both(monkeypatch, corpus, {"pattern": "(a)\\1"})
    assert "./ere.txt:6: aaa" in result["output"]


@pytest.mark.timeout(20)
def test_a_failure_while_reading_kills_ripgrep(tmp_path):
    """``rg`` blocked on a full pipe is killed, not waited for, when reading its output fails."""
    (tmp_path / "big").write_bytes(b"needle\n" * 200_000)  # far more than a pipe holds

    def fail(chunk):
        raise MemoryError

    with pytest.raises(MemoryError):
        _ripgrep._stream(_ripgrep.binary(), ["-n", "needle", "--", str(tmp_path)], fail)


@pytest.mark.parametrize("pattern, python", [("needle", False), ("needle|^.$", True)])
def test_a_late_nul_file_is_searched_again_by_ripgrep(monkeypatch, tmp_path, pattern, python):
    """ripgrep stops at a NUL that grep-tool reads as text (past 8 KiB): ``rg --text`` searches
    that file again, unless a line it prints holds a NUL (the second pattern's ``^.$``)."""
    (tmp_path / "late").write_bytes(b"needle\n" + b"y\n" * 50000 + b"\x00\nneedle late\n")
    monkeypatch.chdir(tmp_path)
    compiled = []
    real = grep_tool._compiled
    monkeypatch.setattr(grep_tool, "_compiled",
                        lambda pattern: compiled.append(pattern) or real(pattern))
    found = grep_tool._fast(_ripgrep.binary(), _ripgrep.rules("."), pattern, ".", None, None)
    assert found is not None and found[0].text().splitlines()[-1] == "./late:50003: needle late"
    assert bool(compiled) == python
