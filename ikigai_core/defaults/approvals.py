"""Default plugin: every tool call the model makes is allowed, asked about, or denied.

What decides, in order (docs/security.md has the whole story):

1. the rules (``ikigai_core.permissions``): the user's, plus a trusted project's ``deny``
   and ``ask`` rules; a matching ``deny`` wins, else the most specific rule;
2. without a matching rule, the default: the read-only built-ins (``file_read``, ``glob``,
   ``grep``, and ``load_skill``, which reads a skill's instructions; from the system
   layer) are allowed unless their schema hints otherwise
   (``readOnlyHint: false`` or ``destructiveHint: true``); every other tool asks;
3. an ``ask`` is answered by the calling session's grants (``--yes``, ``--allow``,
   ``/approve``; ``ToolCallRequest.grants``), else by the person at the terminal
   (``CallContext.ask_user``), else it is a deny saying how to allow.

Calls without a ``call_id`` (``ikigai tool run``: the user's own call) are not judged.
Every decision is recorded in ``$IKIGAI_HOME/approvals.jsonl``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ikigai_core.marker import hookimpl

if TYPE_CHECKING:  # the rules and the lifecycle types load when a call is judged
    from ikigai_core.decision import CallDecision
    from ikigai_core.grants import Grants
    from ikigai_core.lifecycle import CallContext, ToolCallRequest
    from ikigai_core.permissions import Condition, Rule

READ_ONLY_BUILTINS = ("file_read", "glob", "grep", "load_skill", "agent_list", "agent_wait")
"""Built-in tools that only read: allowed without asking (``agent_wait`` reads what
sub-agents answered; forking, sending and killing ask)."""
BUILTIN_SOURCES = ("system", "agents")
"""The layers of the built-in tools: the six and ``load_skill``, and the ``agent_*`` ones."""

ANSWERS = "[y]es once, [a]lways, [n]o (or type why not)"
_SHELL_WORD = re.compile(r"[A-Za-z0-9_./+-]+")
_NO_SHELL_SYNTAX = r"( [^;&|`$()<>\\\n]*)?$"  # arguments, but no second command


@hookimpl(tryfirst=True)  # the guards before other plugins' words
def ikigai_status(grants: Grants) -> Sequence[str]:
    """The chat's approval mode for its status line (:meth:`Grants.mode`)."""
    return [grants.mode()]


@hookimpl
def ikigai_before_tool_call(request: ToolCallRequest) -> CallDecision | None:
    """Allow, ask about, or deny one model-made call, and record the decision."""
    if request.call_id is None:
        return None
    from ikigai_core.decision import CallDecision

    tool, arguments, context = request.tool, request.arguments, request.context
    decision, by, reason = _judge(request)
    unrecorded = _record(context, tool.name, arguments, decision, by, reason)
    if unrecorded is not None:  # fail closed: no call runs unrecorded (issue 21 item 5)
        return CallDecision.deny(unrecorded)
    return CallDecision.allow(by) if decision == "allow" else CallDecision.deny(reason)


def _judge(request: ToolCallRequest) -> tuple[str, str, str]:
    """``(decision, who decided, reason for the model)`` for one call: the deciding rule's,
    else the default's, an ``ask`` settled by :func:`_ask`. Rules that cannot be read
    decide nothing, so every call is denied until they are fixed (fail closed)."""
    from ikigai_core.errors import ConfigError
    from ikigai_core.permissions import deciding_rule

    tool, context = request.tool, request.context
    try:
        rule = deciding_rule(_rules(context), tool.name, request.arguments)
    except ConfigError as exc:
        _tell(context, f"{tool.name} was not run: {exc}")
        return "deny", "unreadable rules", f"the permission rules cannot be read: {exc}"
    if rule is None:
        decision, by = default_decision(tool.name, tool.source, tool.schema), "default"
    elif rule.decision == "deny":
        _tell(context, f"{tool.name} was not run: denied by {rule}; {_lifting(rule, context)}")
        return "deny", str(rule), f"denied by {rule}"
    else:
        decision, by = rule.decision, str(rule)
    return _ask(request, by) if decision == "ask" else ("allow", by, "")


def _lifting(rule: Rule, context: CallContext) -> str:
    """How to lift a deny rule: the user's by its id, a project's in its file."""
    if rule.origin != "user":
        return "it is in the trusted project's .ikigai/permissions.json"
    if rule.id is None:
        return f"remove it from {context.home / 'permissions.json'}"
    return f"remove it with `ikigai permissions remove {rule.id}`"


def default_decision(name: str, source: str, schema: Any) -> str:
    """``allow`` for the system layer's read-only built-ins, unless a hint in the schema's
    ``annotations`` says the tool writes; ``ask`` for everything else. A ``readOnlyHint``
    never loosens: it is the tool's own claim."""
    hints = schema.get("annotations") if isinstance(schema, dict) else None
    hints = hints if isinstance(hints, dict) else {}
    writes = hints.get("readOnlyHint") is False or hints.get("destructiveHint") is True
    return ("allow" if source in BUILTIN_SOURCES and name in READ_ONLY_BUILTINS and not writes
            else "ask")


def _rules(context: CallContext) -> list[Rule]:
    """The user's rules and, in a trusted project, its ``deny`` and ``ask`` rules: the
    project found once per invocation, its trust and its file read as the call starts."""
    from ikigai_core.permissions import RuleStore, read_rules
    from ikigai_core.trust import project_trust

    rules = RuleStore(context.home).rules()
    located = project_trust(context.project, context.home)
    if located is None or located[1] is not None:  # untrusted: its file is never read
        return rules
    path = located[0] / ".ikigai" / "permissions.json"
    for rule in read_rules(path, "project"):
        if rule.decision == "allow":
            _tell(context, f"{path}: a project cannot allow tools; ignored its rule "
                           f"allowing '{rule.tool}'")
        else:
            rules.append(rule)
    return rules


def _ask(request: ToolCallRequest, by: str) -> tuple[str, str, str]:
    """Settle an ``ask``: ``(decision, who decided, reason for the model)``."""
    tool, arguments, context = request.tool, request.arguments, request.context
    grant = request.grants.covering(tool.name, arguments)
    if grant is not None:
        return "allow", grant, ""
    if context.ask_user is None:
        _tell(context, f"{tool.name} was not run: it needs approval ({by}) and nobody can be "
                       f"asked; {request.grants.advice(tool.name)}")
        return "deny", "nobody to ask", "it needs the user's approval and nobody can be asked"
    import json  # lazy: only a call to ask about shows its arguments

    shown = json.dumps(arguments, ensure_ascii=False, indent=1)
    answer = context.ask_user(f"Allow {tool.name} {shown}?\n{ANSWERS}: ")
    if answer is None:
        return "deny", "user (Ctrl-C)", "the user declined the call"
    word = answer.strip()
    if word.lower() in ("y", "yes"):
        return "allow", "user", ""
    if word.lower() in ("a", "always"):
        rule = _remember(context, tool.name, arguments)
        return "allow", f"user, always ({rule})", ""
    why = "" if word.lower() in ("", "n", "no") else f": {word}"
    return "deny", "user", f"the user declined the call{why}"


def _remember(context: CallContext, name: str, arguments: Any) -> Rule:
    """Store the ``allow`` rule an "always" answer stands for, and say which it is."""
    from ikigai_core.permissions import RuleStore

    rule = RuleStore(context.home).add(name, "allow", suggested_conditions(arguments))
    _tell(context, f"stored {rule}; revoke it with `ikigai permissions remove {rule.id}`",
          kind="info")
    return rule


def suggested_conditions(arguments: Any) -> tuple[Condition, ...]:
    """What "always" covers: for a shell ``command``, the same program with any arguments
    but no second command (no ``;``, ``&``, ``|``, ``$``, backticks, redirections);
    for any other tool, every call."""
    from ikigai_core.permissions import Condition

    command = arguments.get("command") if isinstance(arguments, dict) else None
    words = command.split() if isinstance(command, str) else []
    if not words:
        return ()
    if not _SHELL_WORD.fullmatch(words[0]):
        return (Condition("/command", equals=command),)
    return (Condition("/command", regex=f"^{re.escape(words[0])}{_NO_SHELL_SYNTAX}"),)


def _tell(context: CallContext, message: str, kind: str = "warning") -> None:
    if context.notices is not None:
        context.notices.report(message, plugin=__name__, kind=kind)


def _record(context: CallContext, name: str, arguments: Any, decision: str, by: str,
            reason: str) -> str | None:
    """Append the decision to the audit record; ``None``, or why it could not be."""
    entry = {"tool": name, "arguments": arguments, "decision": decision, "by": by,
             "cwd": str(context.cwd)}
    if reason:
        entry["reason"] = reason
    from ikigai_core.errors import ConfigError
    from ikigai_core.permissions import record_decision
    from ikigai_core.statefiles import refuse_exposed

    audit = context.home / "approvals.jsonl"
    try:
        refuse_exposed(audit)  # a record others could rewrite is no record
        record_decision(context.home, entry)
    except OSError as exc:
        problem = f"its decision cannot be recorded in {audit}: {exc.strerror}"
    except ConfigError as exc:
        problem = f"its decision cannot be recorded: {exc}"
    else:
        return None
    _tell(context, f"{name} was not run: {problem}; no call runs until it can be")
    return problem


@hookimpl
def ikigai_commands() -> Sequence[object]:
    """``ikigai permissions``: list, add and remove rules."""
    from ikigai_core.commands.permissions import permissions

    return [permissions]
