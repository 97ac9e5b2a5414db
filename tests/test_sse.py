"""Server-sent events parsing, against the WHATWG rules."""

from __future__ import annotations

import pytest

from ikigai_core.sse import ServerSentEvent, iter_lines, iter_sse


def parse(text: str) -> list[ServerSentEvent]:
    return list(iter_sse(iter_lines([text.encode()])))


def test_blank_line_dispatches_data_events():
    assert parse("data: one\n\ndata: two\n\n") == [
        ServerSentEvent("one"), ServerSentEvent("two")
    ]


def test_multi_line_data_is_joined_with_newlines():
    assert parse("data: a\ndata: b\ndata:\n\n") == [ServerSentEvent("a\nb\n")]


def test_event_type_applies_to_one_event_only():
    events = parse("event: ping\ndata: {}\n\ndata: x\n\n")
    assert [(e.event, e.data) for e in events] == [("ping", "{}"), ("message", "x")]


def test_comments_and_unknown_fields_and_retry_are_ignored():
    assert parse(": keep-alive\nretry: 10\nfoo: bar\ndata: x\n\n") == [ServerSentEvent("x")]


def test_only_one_leading_space_is_stripped():
    assert parse("data:  two spaces\ndata:none\n\n") == [ServerSentEvent(" two spaces\nnone")]


def test_a_field_without_colon_has_an_empty_value():
    assert parse("data\ndata\n\n") == [ServerSentEvent("\n")]


def test_value_may_contain_colons():
    assert parse('data: {"a": "b:c"}\n\n') == [ServerSentEvent('{"a": "b:c"}')]


def test_event_without_data_is_not_dispatched():
    assert parse("event: lonely\n\ndata: x\n\n") == [ServerSentEvent("x")]


def test_last_event_id_is_kept_until_changed_and_nul_ids_are_ignored():
    events = parse("id: 7\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\n")
    assert [e.id for e in events] == ["7", "7", "7"]
    assert parse("data: a\n\n")[0].id is None


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_all_three_line_endings(newline):
    text = f"event: e{newline}data: 1{newline}{newline}data: 2{newline}{newline}"
    assert [(e.event, e.data) for e in parse(text)] == [("e", "1"), ("message", "2")]


def test_unfinished_last_event_is_dropped():
    """The standard: an event not ended by a blank line when the stream ends is not dispatched."""
    assert parse("data: done\n\ndata: cut off") == [ServerSentEvent("done")]
    assert parse("data: done\n\ndata: cut off\n") == [ServerSentEvent("done")]


def test_lines_may_be_given_with_their_terminators():
    assert list(iter_sse(["data: x\r\n", "\r\n"])) == [ServerSentEvent("x")]


def test_chunks_split_anywhere_including_inside_crlf_and_utf8():
    raw = "data: h\u00e9llo\r\n\r\ndata: 2\r\n\r\n".encode()
    chunks = [raw[i : i + 1] for i in range(len(raw))]
    assert list(iter_sse(iter_lines(chunks))) == [ServerSentEvent("h\u00e9llo"), ServerSentEvent("2")]


def test_only_cr_lf_crlf_end_lines_not_unicode_separators():
    """JSON may hold a raw U+2028; str.splitlines would cut the event there."""
    assert parse("data: a\u2028b\x85c\n\n") == [ServerSentEvent("a\u2028b\x85c")]


def test_byte_order_mark_is_dropped_and_bad_utf8_replaced():
    lines = list(iter_lines([b"\xef\xbb\xbfdata: \xff\n", b"", b"\n"]))
    assert lines == ["data: \ufffd", ""]


def test_last_line_without_newline_is_yielded():
    assert list(iter_lines([b"a\nb"])) == ["a", "b"]
    assert list(iter_lines([])) == []
