"""Scripted OpenAI Responses replies for the fake server: the recorded-traffic kit of the
Responses wire (``POST /responses``), which :class:`~pytest_ikigai.model.FakeModel` plays
with ``wire="responses"``.

``RESPONSES.reply("Hi", calls=[...], stream=True, reasoning="Thinking.")`` is a turn as
the API sends it: a reasoning item (summary and ``encrypted_content``) first when
``reasoning`` is given, then the message, then one ``function_call`` item per call, each
streamed as ``response.output_item.added`` ... ``response.output_item.done`` and the whole
response in ``response.completed``.

Sources of the shapes: the API reference (https://platform.openai.com/docs/api-reference/
responses/create, .../responses-streaming) and the official SDK openai-python 3.57's types,
``openai/types/responses/``: ``response.py``, ``response_stream_event.py``,
``response_output_item_added_event.py``, ``response_text_delta_event.py``,
``response_function_call_arguments_delta_event.py``,
``response_reasoning_summary_text_delta_event.py``, ``response_reasoning_item.py``
(``encrypted_content``), ``response_function_tool_call.py``, ``response_usage.py``
(``input_tokens_details.cached_tokens``), ``response_error_event.py``,
``response_failed_event.py``, ``response_incomplete_event.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pytest_ikigai.fakeserver import Reply, SSEItem, json_reply
from pytest_ikigai.replies import Call, OpenAIReplies, pieces

USAGE = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 4},
         "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 2},
         "total_tokens": 15}


def reasoning_item(summary: str, number: int = 1) -> dict[str, Any]:
    """A reasoning item as ``include: ["reasoning.encrypted_content"]`` returns it."""
    return {"id": f"rs_{number}", "type": "reasoning",
            "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": f"gAAAAABo-opaque-{number}-{summary.encode().hex()}=="}


class ResponsesReplies(OpenAIReplies):
    """The Responses wire (error bodies as Chat Completions': ``{"error": {...}}``)."""

    def items(self, text: str = "", calls: Sequence[Call] = (),
              reasoning: str | None = None) -> list[dict[str, Any]]:
        """The output items of a turn, in order."""
        items = [reasoning_item(reasoning)] if reasoning else []
        if text:
            items.append({"id": "msg_1", "type": "message", "status": "completed",
                          "role": "assistant",
                          "content": [{"type": "output_text", "text": text, "annotations": []}]})
        items += [{"id": f"fc_{n}", "type": "function_call", "status": "completed",
                   "call_id": call_id, "name": name,
                   "arguments": args if isinstance(args, str) else json.dumps(args)}
                  for n, (call_id, name, args) in enumerate(calls, 1)]
        return items

    def response(self, output: list[dict[str, Any]], status: str = "completed",
                 incomplete: str | None = None) -> dict[str, Any]:
        """A ``response`` object."""
        return {"id": "resp_1", "object": "response", "created_at": 1700000000,
                "status": status, "error": None,
                "incomplete_details": {"reason": incomplete} if incomplete else None,
                "model": "gpt-5", "output": output, "parallel_tool_calls": True,
                "store": False, "usage": USAGE if status != "in_progress" else None}

    def body(self, text: str = "", calls: Sequence[Call] = (),
             reasoning: str | None = None) -> dict[str, Any]:
        return self.response(self.items(text, calls, reasoning))

    def events(self, text: str = "", calls: Sequence[Call] = (),
               reasoning: str | None = None, incomplete: str | None = None) -> list[SSEItem]:
        output = self.items(text, calls, reasoning)
        found: list[dict[str, Any]] = [
            {"type": "response.created", "response": self.response([], "in_progress")},
            {"type": "response.in_progress", "response": self.response([], "in_progress")},
        ]
        for index, item in enumerate(output):
            found += self._item_events(index, item)
        status = "incomplete" if incomplete else "completed"
        found.append({"type": f"response.{status}",
                      "response": self.response(output, status, incomplete)})
        return [(event["type"], {**event, "sequence_number": n})
                for n, event in enumerate(found)]

    def _item_events(self, index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
        """``output_item.added``, the deltas, ``output_item.done`` of one item."""
        at = {"item_id": item["id"], "output_index": index}
        kind = item["type"]
        if kind == "reasoning":
            summary = item["summary"][0]["text"]
            start = {**item, "summary": []}
            deltas = [{"type": "response.reasoning_summary_text.delta", **at,
                       "summary_index": 0, "delta": piece} for piece in pieces(summary)]
            deltas.append({"type": "response.reasoning_summary_text.done", **at,
                           "summary_index": 0, "text": summary})
        elif kind == "message":
            text = item["content"][0]["text"]
            start = {**item, "status": "in_progress", "content": []}
            part = {"type": "output_text", "text": "", "annotations": []}
            deltas = [{"type": "response.content_part.added", **at, "content_index": 0,
                       "part": part}]
            deltas += [{"type": "response.output_text.delta", **at, "content_index": 0,
                        "delta": piece, "logprobs": []} for piece in pieces(text)]
            deltas.append({"type": "response.output_text.done", **at, "content_index": 0,
                           "text": text, "logprobs": []})
        else:
            start = {**item, "status": "in_progress", "arguments": ""}
            deltas = [{"type": "response.function_call_arguments.delta", **at, "delta": piece}
                      for piece in pieces(item["arguments"], 7)]
            deltas.append({"type": "response.function_call_arguments.done", **at,
                           "name": item["name"], "arguments": item["arguments"]})
        return [{"type": "response.output_item.added", "output_index": index, "item": start},
                *deltas,
                {"type": "response.output_item.done", "output_index": index, "item": item}]

    def turn(self, text: str = "", calls: Sequence[Call] = (), *, reasoning: str | None = None,
             stream: bool = True, incomplete: str | None = None) -> Reply:
        """A turn with a reasoning item (and, streamed, possibly cut by ``incomplete``)."""
        if stream:
            return self.stream(self.events(text, calls, reasoning, incomplete))
        return json_reply(self.body(text, calls, reasoning))

    def error_event(self, message: str) -> SSEItem:
        return ("error", {"type": "error", "code": "server_error", "message": message,
                          "param": None, "sequence_number": 3})

    def failed_event(self, message: str) -> SSEItem:
        """``response.failed``: the response ends with an error."""
        response = {**self.response([], "failed"),
                    "error": {"code": "server_error", "message": message}}
        return ("response.failed", {"type": "response.failed", "response": response,
                                    "sequence_number": 3})


RESPONSES = ResponsesReplies()
"""The Responses reply builder."""
