"""The output budget: head + marker + tail, JSON within the limit, exact totals, whole chars."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ikigai_tools_builtin._budget import Capture, Ends, Escaped, Text, budget, dump, escaped, fit


def test_without_limit_nothing_is_cut():
    result = {"output": "x" * 1_000_000, "count": 1}
    assert fit(result, None) == result


def test_fitting_text_is_unchanged():
    assert fit({"output": "small"}, 100) == {"output": "small"}


def test_error_objects_pass_through():
    error = {"error": "File not found: x", "error_code": "FILE_NOT_FOUND"}
    assert fit(error, 10) == error


def test_cut_keeps_head_marker_tail_and_totals():
    text = "".join(f"{n}\n" for n in range(10000))
    out = fit({"output": text, "count": 10000}, 1000)
    assert len(dump(out)) <= 1000
    assert out["count"] == 10000
    assert out["output"].startswith("0\n1\n2\n")
    assert out["output"].endswith("9998\n9999\n")
    assert out["truncated"]["total_bytes"] == len(text)
    kept = out["truncated"]["kept_bytes"]
    assert kept >= 500
    assert f"[... truncated: {len(text) - kept} bytes omitted ...]" in out["output"]


def test_escaping_is_counted():
    text = '"\\\x01' * 5000
    out = fit({"output": text}, 2000)
    assert len(dump(out)) <= 2000
    assert out["output"].startswith('"\\\x01')


def test_multibyte_characters_are_never_split():
    text = "é😀" * 5000
    out = fit({"output": text}, 1500)
    raw = dump(out)
    assert len(raw) <= 1500
    raw.decode("utf-8")
    head, tail = out["output"].split("[... truncated")
    assert set(head.strip("\n")) <= {"é", "😀"}


def test_resume_hint_is_built_from_the_kept_head():
    text = Text(
        "".join(f"line {n}\n" for n in range(1, 1001)),
        resume=lambda head: f"; next {head.count(chr(10)) + 1}",
    )
    out = fit({"output": text}, 600)
    head = out["output"].split("[... truncated")[0]
    assert f"; next {head.count(chr(10)) + 1}" in out["output"]


def test_text_that_lost_its_middle_while_read():
    capture = Capture(100)
    for n in range(10000):
        capture.feed(f"{n:05d}\n".encode())
    assert capture.gap
    assert capture.head().startswith(b"00000\n")
    assert capture.tail().endswith(b"09999\n")
    assert len(capture.tail()) == 100
    out = fit({"output": Text.from_capture(capture)}, 150)
    assert out["truncated"]["total_bytes"] == 60000
    assert len(dump(out)) <= 150


def test_capture_without_gap_is_whole():
    capture = Capture(10)
    capture.feed(b"0123456789abcdefghij")
    assert not capture.gap
    assert capture.head() == b"0123456789abcdefghij"
    assert capture.tail() == b""


@pytest.mark.parametrize(
    "value, expected", [("4096", 4096), ("0", None), ("-5", None), ("abc", None), ("", None)]
)
def test_budget_variable(monkeypatch, value, expected):
    monkeypatch.setenv("IKIGAI_MAX_OUTPUT_BYTES", value)
    assert budget() == expected


def test_dump_replaces_lone_surrogates():
    assert json.loads(dump({"output": "a\udcffb"})) == {"output": "a\ufffdb"}


@settings(max_examples=150, deadline=None)
@given(text=st.text(min_size=0, max_size=6000), limit=st.integers(min_value=400, max_value=5000))
def test_any_text_fits_any_budget(text, limit):
    out = fit({"output": text, "exit_code": 0}, limit)
    raw = dump(out)
    assert len(raw) <= limit
    assert json.loads(raw)["exit_code"] == 0
    if "truncated" in out:
        assert out["truncated"]["total_bytes"] == len(text.encode("utf-8", "replace"))


@settings(max_examples=100, deadline=None)
@given(
    piece=st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1,
                  max_size=300),
    size=st.integers(min_value=3000, max_value=20000),
    limit=st.integers(min_value=1024, max_value=2900),
)
@example(piece="\\", size=3000, limit=1024)  # found by a run: all doubled once escaped
def test_ascii_keeps_at_least_half_the_budget(piece, size, limit):
    """Printable ASCII of 3,000 to 20,000 characters: a drawn piece repeated (drawing every
    character of it took seconds), so ``\\`` or ``"`` alone, the costliest, are in it. The
    kept head and tail take half the budget once escaped: of text that is all ``\\`` (two
    bytes each in JSON), a quarter of the budget's bytes are kept."""
    text = (piece * (size // len(piece) + 1))[:size]
    out = fit({"output": text}, limit)
    assert "truncated" in out
    head, tail = re.split(r"\n?\[\.\.\. truncated: \d+ bytes omitted \.\.\.\]\n?",
                          out["output"])
    assert out["truncated"]["kept_bytes"] == len(head) + len(tail) >= limit // 4
    assert len(dump(head + tail)) - 2 >= limit // 2


@settings(max_examples=300, deadline=None)
@given(data=(st.binary(max_size=200)
             | st.text(max_size=60).map(lambda text: text.encode("utf-8", "surrogatepass")))
       .filter(lambda data: b"\0" not in data))  # NUL: the caller's separator
def test_escaped_bytes_are_what_dump_writes(data):
    """The byte-level escape of search output equals dump's, invalid UTF-8 included."""
    expected = dump(data.decode("utf-8", "replace"))[1:-1]
    assert escaped(data).replace(b"\n", b"\\n") == expected


def test_escaped_text_is_copied_into_the_json():
    result = {"output": Escaped([escaped(b'a "b"\\'), escaped("\t\x01é".encode())]),
              "count": 2}
    assert dump(result) == dump({"output": 'a "b"\\\t\x01é', "count": 2})
    assert fit(result, None) is result
    assert fit(result, 1000) is result
    cut = fit({"output": Escaped([b"x" * 5000]), "count": 1}, 1000)
    assert len(dump(cut)) <= 1000 and cut["truncated"]["total_bytes"] == 5000


@settings(max_examples=150, deadline=None)
@given(lines=st.sets(st.text(st.characters(blacklist_characters="\n"), max_size=40), max_size=300),
       limit=st.integers(min_value=300, max_value=3000), seed=st.randoms())
def test_ends_of_a_sorted_list_fit_like_the_whole_list(lines, limit, seed):
    """Kept within a budget while fed in any order, the list prints as the whole list would."""
    order = list(lines)
    seed.shuffle(order)
    ends = Ends(limit)
    for line in order:
        ends.append(line)
    whole = "\n".join(sorted(lines))
    assert ends.count == len(lines)
    assert fit({"output": ends.text(), "count": ends.count}, limit) == fit(
        {"output": whole, "count": len(lines)}, limit)
    longest = 4 * 40 + 1  # bytes of a line and its newline
    assert ends.low_bytes < limit + longest and ends.high_bytes < limit + longest


@pytest.mark.parametrize(
    "tool, args, files",
    [
        ("file-write", {"file_path": "f", "content": "x" * 50}, {}),
        ("file-edit", {"file_path": "e", "old_string": "a", "new_string": "b"}, {"e": "a"}),
    ],
)
def test_small_results_are_never_truncated(run_tool, tmp_path, tool, args, files):
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    run = run_tool(tool, args, cwd=tmp_path, env={"IKIGAI_MAX_OUTPUT_BYTES": "4096"})
    assert "truncated" not in run.result
