"""Registry, strict JSON, envelope, printable output."""

from __future__ import annotations

import threading

import pytest

from ikigai_core import SkippedTool, Tool, ToolOutcome
from ikigai_core.commands.output import dumps, printable
from ikigai_core.envelope import ikigai_wrap_result
from ikigai_core.registry import Registry, merge
from ikigai_core.strictjson import loads, loads_object


def tool(name: str, source: str = "user") -> Tool:
    return Tool(name, "d", {"type": "object"}, (f"/t/{name}-tool",), source)


def test_registry_is_sorted_immutable_and_readable_from_threads():
    registry = Registry([tool("b"), tool("a")], [SkippedTool("c", "user", "bad")])
    assert list(registry) == ["a", "b"] and len(registry) == 2
    assert registry.get("zz") is None and "Registry(['a', 'b'], skipped=1)" == repr(registry)
    with pytest.raises(TypeError):
        registry._items["x"] = tool("x")  # type: ignore[index]
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(list(registry))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [["a", "b"]] * 8


def test_merge_keeps_highest_precedence_regardless_of_order():
    registry = merge([(20, tool("x", "project")), (0, tool("x", "system")), (10, tool("x", "user"))])
    assert registry["x"].source == "project"
    assert sorted(s.source for s in registry.skipped) == ["system", "user"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "output is empty"),
        (b"  \n", "output is empty"),
        (b"[]", "a JSON array"),
        (b'"s"', "a JSON string"),
        (b"null", "a JSON null"),
        (b"true", "a JSON boolean"),
        (b"1.5", "a JSON number"),
        (b'{"a": NaN}', "NaN"),
        (b'{"a": -Infinity}', "-Infinity"),
        (b"{} {}", "data after the JSON value"),
        (b'{"a": "\xff"}', "not valid UTF-8"),
        (b"{", "not valid JSON"),
    ],
)
def test_strict_json_rejects_with_reason(data, message):
    with pytest.raises(ValueError, match=message):
        loads_object(data)


def test_strict_json_accepts_one_object_with_whitespace():
    assert loads_object(b' {"a": [1, "\xc3\xa9"]}\n') == {"a": [1, "é"]}


def test_envelopes():
    assert ikigai_wrap_result(ToolOutcome("t", result={"x": 1})) == {
        "tool_success": True, "result": {"x": 1}}
    assert ikigai_wrap_result(ToolOutcome("t", error="e", error_code="TOOL_NOT_FOUND")) == {
        "tool_success": False, "error": "e", "error_code": "TOOL_NOT_FOUND"}
    crashed = ToolOutcome("t", error="e", error_code="TOOL_CRASHED", exit_code=139, stdout="o",
                          stderr="s")
    assert ikigai_wrap_result(crashed) == {
        "tool_success": False, "error": "e", "error_code": "TOOL_CRASHED", "exit_code": 139,
        "stdout": "o", "stderr": "s"}


def test_printable_escapes_control_characters():
    assert printable("a\x1b[31mb\x07\tc\nd") == "a\\x1b[31mb\\x07\tc\nd"
    assert printable("a\nb", keep_newlines=False) == "a\\nb"
    assert printable("\x9b") == "\\x9b"


@pytest.mark.parametrize("data", [b'{"a": "\\ud800"}', b'{"\\uDC00": 1}', b'{"a": [{"b": "x\\udfffy"}]}'])
def test_lone_surrogate_escapes_are_not_unicode(data):
    with pytest.raises(ValueError, match="unpaired UTF-16 surrogate"):
        loads_object(data)
    with pytest.raises(ValueError, match="unpaired UTF-16 surrogate"):
        loads(data)


def test_paired_surrogate_escapes_are_one_character():
    assert loads_object(b'{"a": "\\ud83d\\ude00", "b": "\\\\ud800"}') == {"a": "😀", "b": "\\ud800"}


def test_undecodable_text_still_prints():
    name = b"bad-\xff-tool".decode("utf-8", "surrogateescape")
    assert printable(name) == "bad-\\udcff-tool"
    assert dumps({"path": name, "x": "é"}) == r'{"path": "bad-\udcff-tool", "x": "\u00e9"}'
    assert dumps({"x": "é"}) == '{"x": "é"}'
