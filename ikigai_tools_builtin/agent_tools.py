"""``agent_fork``, ``agent_send``, ``agent_wait``, ``agent_kill``, ``agent_list``: the model
starts, steers and stops sub-agents (issue 25).

Each is a thin client of the agents API (:mod:`ikigai_toolkit.agents_api`), so a script in
any language can replace it. Without ``IKIGAI_API`` (no conversation is serving it) each
answers one error saying so. Standard library only, like every built-in tool.
"""

from __future__ import annotations

import os
import sys

from ikigai_toolkit.agents_api import AgentsApiError, AgentsClient
from ikigai_tools_builtin._protocol import run_tool

WAIT_SECONDS = 25
"""``agent_wait``'s default: under the 30 s a tool call may take by default."""
_BUDGET = {"type": "object", "description": "Hard limits for the child (and its own "
           "children): tokens, turns, seconds, cost (USD). Unset: the defaults.",
           "properties": {k: {"type": "number"} for k in ("tokens", "turns", "seconds", "cost")}}
_ID = {"type": "string", "description": "The agent's id, as agent_fork returned it."}

SCHEMAS: dict[str, dict] = {
    "agent_fork": {
        "name": "agent_fork",
        "description": "Start a sub-agent on a task; it works in parallel with its own "
                       "context and tools, and only its final answer comes back (agent_wait). "
                       "Returns its id.",
        "parameters": {"type": "object", "properties": {
            "prompt": {"type": "string", "description": "The task, complete: the child "
                       "sees nothing else of this conversation unless history says so."},
            "agent": {"type": "string", "description": "An agent definition's name, as "
                      "your instructions list them under Agents (default: none)."},
            "tools": {"type": "array", "items": {"type": "string"},
                      "description": "The tools it may use (default: yours)."},
            "model": {"type": "string", "description": "Its model (default: yours)."},
            "history": {"type": "string", "description": "none (default), all, or a "
                        "number of your latest messages it starts with."},
            "budget": _BUDGET}, "required": ["prompt"]},
    },
    "agent_send": {
        "name": "agent_send",
        "description": "Give a sub-agent its next message; with interrupt, stop what it is "
                       "doing and give it this instead.",
        "parameters": {"type": "object", "properties": {
            "id": _ID, "message": {"type": "string"},
            "interrupt": {"type": "boolean"}}, "required": ["id", "message"]},
    },
    "agent_wait": {
        "name": "agent_wait",
        "description": "Wait for sub-agents to finish and get their answers: status, output, "
                       "tokens. An agent still running after the timeout says so; wait again.",
        "parameters": {"type": "object", "properties": {
            "ids": {"type": "array", "items": {"type": "string"},
                    "description": "Which (default: all of yours)."},
            "timeout": {"type": "number",
                        "description": f"Seconds (default {WAIT_SECONDS})."},
            "mode": {"type": "string", "enum": ["all", "any"],
                     "description": "all (default) or the first to finish."}}},
        "annotations": {"readOnlyHint": True},
    },
    "agent_kill": {
        "name": "agent_kill",
        "description": "Stop a sub-agent now, its tools and its own sub-agents too.",
        "parameters": {"type": "object", "properties": {
            "id": _ID,
            "cascade": {"type": "boolean", "description": "false: stop only this agent; "
                        "its own sub-agents run on (agent_list shows them). Default true."}},
            "required": ["id"]},
    },
    "agent_list": {
        "name": "agent_list",
        "description": "Your sub-agents: id, name, status, tokens.",
        "parameters": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
}


def handle(name: str, args: dict) -> dict:
    """Call the API for tool ``name``; its answer, or an error object."""
    try:
        api = AgentsClient()
        if name == "agent_fork":
            history = args.get("history")
            if isinstance(history, str) and history.isdigit():
                history = int(history)
            agent_id = api.fork(args["prompt"], agent=args.get("agent"),
                                tools=args.get("tools"), model=args.get("model"),
                                history=history, budget=args.get("budget"))
            return {"id": agent_id, "output": f"started {agent_id}; agent_wait for its answer"}
        if name == "agent_send":
            api.send(args["id"], args["message"], interrupt=bool(args.get("interrupt")))
            return {"id": args["id"], "output": f"sent to {args['id']}"}
        if name == "agent_wait":
            ids = args.get("ids") or []
            return {"agents": api.wait(ids, args.get("timeout", WAIT_SECONDS),
                                       mode=args.get("mode", "all"),
                                       max_output=_share(len(ids)))}
        if name == "agent_kill":
            return api.kill(args["id"], cascade=args.get("cascade") is not False)
        return {"agents": api.list()}
    except AgentsApiError as exc:
        return {"error": str(exc), "error_code": "AGENTS_API"}


def _share(count: int) -> int:
    """Bytes of output each waited agent may return: the tool's output budget shared
    (with room for the rest of the answer), 16 KiB each without a budget."""
    budget = os.environ.get("IKIGAI_MAX_OUTPUT_BYTES", "")
    if not budget.isdigit():
        return 16 * 1024
    return max((int(budget) - 2048) // max(count, 4), 256)


def main() -> None:
    """Run the tool this script is named for (``agent-fork-tool`` is ``agent_fork``)."""
    name = os.path.basename(sys.argv[0]).removesuffix("-tool").replace("-", "_")
    run_tool(SCHEMAS[name], lambda args: handle(name, args))
