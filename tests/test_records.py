"""One record type for the public API (issue 23, item 2): every public record (the tool
and skill records, the settings, the conversation, lifecycle and provider records) is built
by keyword, frozen, compared field by field, weak-referenceable, copied with
``.replace()``, and is no tuple."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

import ikigai_core
from ikigai_core import (
    AssistantMessage,
    Attachment,
    Budget,
    CallContext,
    CallDecision,
    CallRecord,
    Grants,
    ProviderRequest,
    ServerSentEvent,
    Settings,
    Skill,
    SkillScan,
    SkippedSkill,
    SkippedTool,
    TextDelta,
    Tool,
    ToolCall,
    ToolCallRequest,
    ToolCandidate,
    ToolFit,
    ToolOutcome,
    ToolResult,
    ToolResultsMessage,
    ToolScan,
    Usage,
    UserMessage,
)
from ikigai_core.errors import ConfigError
from ikigai_core.record import Record

NOT_RECORDS = {
    # services and the protocols or bases a plugin implements: behaviour, not data
    "App", "Session", "SessionEvents", "DirectorySource", "Provider", "SkillDirectory",
    "SkillSource", "ToolRunner", "ToolSource", "TurnBuilder",
    # changed in place by design: the conversation grows; a process hook edits the spec
    "Conversation", "ProcessSpec",
}
"""The public classes that are not records (exceptions aside), each for its reason."""

RECORDS = [  # (a record, one change)
    (Tool(name="t", description="d", parameters={}, command=("t-tool",), source="user"),
     {"description": "e"}),
    (ToolCandidate(name="t", command=("t-tool",)), {"path": Path("t-tool")}),
    (SkippedTool(name="t", source="user", reason="broken"), {"kind": "ignored"}),
    (ToolScan(), {"skipped": (SkippedTool(name="t", source="user", reason="r"),)}),
    (Settings(), {"max_turns": 3}),
    (Skill(name="s", description="d", path=Path("s.md"), body="b", source="user"),
     {"tools": ("x",)}),
    (SkippedSkill(name="s", source="user", reason="broken"), {"kind": "untrusted"}),
]
RECORDS.append((SkillScan(), {"skills": (RECORDS[5][0],)}))
_CONTEXT = CallContext(cwd=Path("."), home=Path("h"), environ={}, settings=Settings(),
                       project=None)
_CALL = ToolCall("c1", "t", {})
RECORDS += [
    (_CONTEXT, {"environ": {"A": "1"}}),
    (ToolCallRequest(tool=RECORDS[0][0], arguments={}, context=_CONTEXT), {"call_id": "c1"}),
    (CallRecord(name="t", tool=None, arguments={}, outcome=ToolOutcome("t"), duration=0.5,
                context=_CONTEXT), {"duration": 1.0}),
    (ToolOutcome("t"), {"error": "e"}),
    (CallDecision.deny("no"), {"reason": "never"}),
    (Attachment(mime_type="image/png", data=b"x"), {"data": b"y"}),
    (Budget(), {"cost": 1.0}),
    (Grants(), {"yes": True}),
    (ProviderRequest("http://x", {}, {}), {"url": "http://y"}),
    (ServerSentEvent(data="{}"), {"event": "done"}),
    (ToolFit(tool="t", declaration={}), {"reason": "r"}),
    (_CALL, {"name": "u"}),
    (UserMessage("hi"), {"text": "ho"}),
    (AssistantMessage(text="hi"), {"tool_calls": (_CALL,)}),
    (ToolResult(_CALL, {"tool_success": True}), {"duration": 2.0}),
    (ToolResultsMessage(()), {"results": (ToolResult(_CALL, {}),)}),
    (TextDelta("a"), {"text": "b"}),
    (Usage(), {"input_tokens": 3}),
]


def test_every_public_record_is_a_record_and_tested_here():
    classes = {name for name in ikigai_core.__all__
               if isinstance(getattr(ikigai_core, name), type)
               and not issubclass(getattr(ikigai_core, name), BaseException)}
    records = {name for name in classes if issubclass(getattr(ikigai_core, name), Record)}
    assert classes - records == NOT_RECORDS
    assert records == {type(record).__name__ for record, _ in RECORDS}


def test_a_decision_built_by_replace_and_a_decision_copied_by_replace():
    built = CallDecision.replace({"a": 1}, "fixed")  # the spelling plugins use since issue 9
    assert (built.action, built.arguments, built.reason) == ("replace", {"a": 1}, "fixed")
    assert built.replace(reason="again") == CallDecision.replacing({"a": 1}, "again")


def test_a_cached_value_is_neither_compared_nor_copied():
    picture = Attachment(mime_type="image/png", data=b"x")
    assert picture.base64 == "eA=="
    assert picture == Attachment(mime_type="image/png", data=b"x")
    assert picture.replace(data=b"y").base64 == "eQ=="


@pytest.mark.parametrize("record, change", RECORDS, ids=lambda r: type(r).__name__)
def test_every_public_record_is_spelled_the_same(record, change):
    kind = type(record)
    field, value = next(iter(change.items()))
    changed = record.replace(**change)
    assert getattr(changed, field) == value and changed != record
    assert changed.replace(**{field: getattr(record, field)}) == record
    with pytest.raises(AttributeError, match="frozen"):
        setattr(record, field, value)
    with pytest.raises(TypeError):
        record[0]  # no tuple semantics
    with pytest.raises(TypeError):
        iter(record)
    with pytest.raises(TypeError, match="unexpected argument 'nonsense'"):
        kind(nonsense=1)
    with pytest.raises(TypeError, match="no field 'nonsense'"):
        record.replace(nonsense=1)
    ref = weakref.ref(changed)
    del changed
    gc.collect()
    assert ref() is None


def test_a_missing_field_is_named():
    with pytest.raises(TypeError, match="SkippedTool\\(\\) needs the argument 'reason'"):
        SkippedTool(name="t", source="user")


def test_the_named_tuple_copy_still_works_for_one_release_with_a_warning():
    tool = RECORDS[0][0]
    with pytest.warns(DeprecationWarning, match=r"Tool._replace\(\) is deprecated; use .replace\(\)"):
        assert tool._replace(description="e") == tool.replace(description="e")


def test_a_refused_setting_cannot_be_read_around_its_guard():
    settings = Settings(max_turns=5, problems={"max_turns": "IKIGAI_MAX_TURNS: bad"})
    with pytest.raises(ConfigError, match="bad"):
        settings.max_turns  # noqa: B018
    with pytest.raises(TypeError):
        settings[6]  # a named tuple's index gave the refused value
    with pytest.raises(TypeError):
        list(settings)


def test_a_record_class_of_ones_own():
    """What a plugin's own record gets: fields in order (class variables are none),
    positions or keywords, a repr, a hash, and one-line errors."""
    from typing import ClassVar

    from ikigai_core.record import Record

    class Point(Record):
        unit: ClassVar[str] = "px"
        x: int
        y: int = 0

    assert Point(1, y=2) == Point(x=1, y=2) != Point(x=1)
    assert Point(1) != (1, 0)  # not a tuple
    assert repr(Point(1)) == "Point(x=1, y=0)" and Point.unit == "px"
    assert hash(Point(1, 2)) == hash(Point(y=2, x=1))
    with pytest.raises(TypeError, match="takes 2 arguments, 3 were given"):
        Point(1, 2, 3)
    with pytest.raises(TypeError, match="a second value for argument 'x'"):
        Point(1, x=2)
    with pytest.raises(AttributeError, match="Point is frozen"):
        del Point(1).x
