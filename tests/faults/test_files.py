"""file_edit against Python's own replacement semantics, for any old/new strings.

Either the file ends up exactly as ``str.replace`` says, or it is untouched (no temp file
left) and the error is the right one. Concurrent edits and failed writes (full disk, no
permission, missing parent, failed rename) are proven in tests/tools/ (docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ikigai_tools_builtin.file_edit_tool import handle

# A small alphabet makes matches, overlaps and multi-byte characters likely.
texts = st.text(alphabet="ab\n€\u00e9 ", max_size=24)
FAST = settings(max_examples=150, deadline=None)


def expected(content: str, old: str, new: str, replace_all: bool) -> tuple[str, dict | None]:
    """What the file must hold afterwards, and the error object (None on success)."""
    found = content.count(old) if old else 0
    if not old:
        return content, {"error_code": "INVALID_ARG"}
    if old == new:
        return content, {"error_code": "INVALID_ARG"}
    if not replace_all and found == 0:
        return content, {"error": "String not found in file", "error_code": "NOT_FOUND"}
    if not replace_all and found > 1:
        return content, {"error": f"String found {found} times, use replace_all to replace all",
                         "error_code": "NOT_UNIQUE"}
    return content.replace(old, new), None


def check(directory: Path, result: dict, content: str, old: str, new: str,
          replace_all: bool) -> None:
    want, error = expected(content, old, new, replace_all)
    assert (directory / "f.txt").read_bytes() == want.encode()
    assert os.listdir(directory) == ["f.txt"], "a temp file was left behind"
    if error is None:
        assert result["replacements"] == content.count(old)
    else:
        assert {k: result.get(k) for k in error} == error


def edit_in_process(content: str, old: str, new: str, replace_all: bool) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        (directory / "f.txt").write_bytes(content.encode())
        args = {"file_path": str(directory / "f.txt"), "old_string": old, "new_string": new,
                "replace_all": replace_all}
        check(directory, handle(args), content, old, new, replace_all)


@FAST
@given(texts, texts, texts, st.booleans())
def test_file_edit_matches_python_replace_or_leaves_the_file_alone(content, old, new, all_):
    edit_in_process(content, old, new, all_)


@FAST
@given(texts, st.data())
def test_file_edit_with_old_taken_from_the_content(content, data):
    start = data.draw(st.integers(0, len(content)))
    old = content[start:data.draw(st.integers(start, len(content)))]
    edit_in_process(content, old, data.draw(texts), data.draw(st.booleans()))


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(texts, texts, texts, st.booleans())
def test_file_edit_big_budget(content, old, new, all_):
    edit_in_process(content, old, new, all_)


EXE = Path(sys.executable).with_name("file-edit-tool")


@pytest.mark.skipif(not EXE.exists(), reason="file-edit-tool is not installed (pip install -e .)")
@settings(max_examples=15, deadline=None)
@given(texts, texts, texts, st.booleans())
def test_installed_file_edit_tool_agrees(content, old, new, replace_all):
    """The same property through the real executable and its JSON protocol."""
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        (directory / "f.txt").write_bytes(content.encode())
        args = {"file_path": "f.txt", "old_string": old, "new_string": new,
                "replace_all": replace_all}
        proc = subprocess.run([str(EXE)], input=json.dumps(args).encode(), capture_output=True,
                              cwd=directory, timeout=30)
        assert proc.returncode == 0, proc.stderr
        check(directory, json.loads(proc.stdout), content, old, new, replace_all)
