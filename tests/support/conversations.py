"""A full provider-neutral conversation for the request-body tests of every provider."""

from __future__ import annotations

from ikigai_core.conversation import (
    AssistantMessage,
    Conversation,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)

READ = ToolCall("call_read", "file_read", {"file_path": "README.md"})
MISSING = ToolCall("call_grep", "grep", {"pattern": "TODO", "path": "nowhere"})
OK_ENVELOPE = {"tool_success": True, "result": {"output": "# ikigai\n"}}
ERROR_ENVELOPE = {
    "tool_success": False, "error": "Tool 'grep' crashed with exit code 2",
    "error_code": "TOOL_CRASHED", "exit_code": 2, "stdout": "", "stderr": "nowhere: no such directory",
}


def full_conversation() -> Conversation:
    """System prompt; user; assistant text + two parallel calls; both results (one an
    error envelope); the final answer; a follow-up question."""
    return Conversation(
        system="You are terse.",
        messages=[
            UserMessage("Summarize the README and list TODOs"),
            AssistantMessage(text="Let me look.", tool_calls=(READ, MISSING), stop_reason="tool"),
            ToolResultsMessage((ToolResult(READ, OK_ENVELOPE), ToolResult(MISSING, ERROR_ENVELOPE))),
            AssistantMessage(text="It is about ikigai; grep failed."),
            UserMessage("Thanks"),
        ],
    )
