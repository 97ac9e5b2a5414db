"""The tools' JSON codec: json's own C scanner and encoder, with json's answers exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ikigai_toolkit import jsonio
from tests.tools.conftest import BIN

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _outcome(call, *args, **kwargs):
    """``("ok", value)`` or ``("error", type, message)``."""
    try:
        return "ok", call(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - comparing errors is the point
        return "error", type(exc), str(exc)


@given(values)
def test_dumps_writes_what_json_writes(value):
    assert jsonio.dumps(value) == json.dumps(value, ensure_ascii=False, allow_nan=False,
                                              separators=(", ", ": "))


@given(values, st.sampled_from(["", " ", "\n\t", "\r\n "]))
def test_loads_reads_what_json_reads(value, space):
    data = (space + json.dumps(value) + space).encode()
    assert repr(jsonio.loads(data)) == repr(json.loads(data))


@given(values | st.sets(st.integers()) | st.dictionaries(st.text(), st.tuples(st.integers())))
def test_canonical_writes_what_json_writes_sorted(value):
    """One text for equal values, whatever their keys' order (the core's schema cache key)."""
    assert jsonio.canonical(value) == json.dumps(value, sort_keys=True, default=repr)
    if isinstance(value, dict):
        assert jsonio.canonical(dict(reversed(value.items()))) == jsonio.canonical(value)


@pytest.mark.parametrize("data", [
    b"", b"{", b'{"a": 1} x', b'{"a": 1}{}', b'{"a": "\x01"}', b"\xff", b'\xef\xbb\xbf{"a": 1}',
    '{"a": 1}'.encode("utf-16"), b"NaN", b'{"a": -Infinity}', b"[1, 2,]", b"  12  ", b"tru",
])
def test_odd_input_gets_json_answer(data):
    """Errors say what json says; what json reads in other encodings is read too."""
    assert repr(_outcome(jsonio.loads, data)) == repr(_outcome(json.loads, data))


def test_strings_are_every_string_value_at_any_depth_in_order():
    value = {"a": "x", "b": [1, None, {"c": "y", "d": ["z", 2.5, True]}], "e": ("t",)}
    assert list(jsonio.strings(value)) == ["x", "y", "z", "t"]  # keys are not values
    assert list(jsonio.strings(7)) == []


def test_unserialisable_values_fail_as_in_json():
    for value in ({"a": object()}, {"a": float("nan")}, {(1, 2): 3}):
        assert repr(_outcome(jsonio.dumps, value)) == repr(_outcome(
            json.dumps, value, ensure_ascii=False, allow_nan=False, separators=(", ", ": ")))


def test_without_the_c_codec_json_does_the_work(monkeypatch):
    monkeypatch.setattr(jsonio, "_scan", None)
    monkeypatch.setattr(jsonio, "_encode", None)
    monkeypatch.setattr(jsonio, "_encode_canonical", None)
    assert jsonio.loads(b' {"a": [1, "\\u00e9"]} ') == {"a": [1, "\u00e9"]}
    assert jsonio.canonical({"b": {1, 2}, "a": "\u00e9"}) == '{"a": "\\u00e9", "b": "{1, 2}"}'
    assert jsonio.dumps({"a": "\u00e9"}) == '{"a": "\u00e9"}'


_CHANGED_CODEC = """
import _json, json, sys  # json keeps its own references to the codec, as it would match it
def changed(*args):
    raise TypeError("make_encoder() takes exactly 3 arguments")
_json.make_scanner = _json.make_encoder = changed
from ikigai_core.cli import main
main(sys.argv[1:])
"""


def test_a_changed_private_codec_falls_back_to_json(isolated_home, tmp_path):
    """A future CPython whose private ``_json`` takes other arguments cannot crash every
    command at import: json does the work (issue 23)."""
    ran = subprocess.run([sys.executable, "-c", _CHANGED_CODEC, "tool", "list", "--json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert "bash" in {tool["name"] for tool in json.loads(ran.stdout)}


@pytest.mark.parametrize("tool, args", [
    ("bash", {"command": "true"}),
    ("glob", {"pattern": "**/*.txt"}),
    ("grep", {"pattern": "needle"}),
    ("file_read", {"file_path": "a.txt"}),
    ("file_write", {"file_path": "b.txt", "content": "x\n"}),
])
def test_a_tool_starts_without_re_or_json(tmp_path, tool, args):
    """``re`` with ``enum``, and ``json`` on top, were a third of every tool's start."""
    (tmp_path / "a.txt").write_text("a needle\n")
    exe = BIN / f"{tool.replace('_', '-')}-tool"
    ran = _importing([str(exe)], tmp_path, json.dumps(args).encode())
    assert ran.returncode == 0, ran.stderr
    assert '"error"' not in ran.stdout.decode()
    at_start = _imported(_importing(["-c", "pass"], tmp_path, b""))  # editable installs' finders
    assert (_imported(ran) - at_start) & {"re", "json", "enum"} == set()


def _importing(argv: list[str], cwd, data: bytes) -> subprocess.CompletedProcess[bytes]:
    """``python -X importtime ARGV`` run in ``cwd`` with ``data`` on stdin."""
    return subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=cwd, input=data,
                          capture_output=True, timeout=60,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


def _imported(ran: subprocess.CompletedProcess[bytes]) -> set[str]:
    """The modules a ``-X importtime`` run imported."""
    return {line.rpartition("|")[2].strip() for line in ran.stderr.decode().splitlines()
            if line.startswith("import time:")}
