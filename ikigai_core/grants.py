"""What a session approves without asking the user (``--yes``, ``--allow``, ``/approve``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ikigai_core.record import Record

if TYPE_CHECKING:
    from ikigai_core.permissions import Rule


class Grants(Record):
    """What a session approves of the tool calls that would ask: ``yes`` (all of them:
    ``--yes``, chat's ``/approve yes``) and the ``allow`` rules (``--allow``). A deny rule
    still denies. They belong to one :class:`~ikigai_core.session.Session` (a sub-agent
    has its parent's, :attr:`~ikigai_core.session.Session.grants`), and reach
    ``ikigai_before_tool_call`` as each call is judged (:attr:`ToolCallRequest.grants`).

    :param yes: every call that would ask is approved.
    :param allow: rules (:func:`ikigai_core.permissions.allow_rule`) approving the calls
        they match.
    :param yes_offered: the command offers ``--yes``; ``ikigai batch`` does not (only
        ``--allow`` and each task's ``allow`` approve its calls), so :meth:`advice` does
        not name it there.
    """

    yes: bool = False
    allow: tuple[Rule, ...] = ()
    yes_offered: bool = True

    def covering(self, name: str, arguments: Any) -> str | None:
        """Which grant approves this call, as said in the record, or ``None``."""
        for rule in self.allow:
            if rule.matches(name, arguments):
                return f"--allow {rule.tool}" + "".join(f":{c}" for c in rule.when)
        return "--yes" if self.yes else None

    def advice(self, tool: str) -> str:
        """How to have a call of ``tool`` that nobody could approve run next time: what the
        command offers, or a permission rule."""
        offered = (f"--yes or --allow {tool}" if self.yes_offered
                   else f"--allow {tool} or the task's \"allow\": [\"{tool}\"]")
        return f"run again with {offered}, or add a rule: ikigai permissions allow {tool}"

    def mode(self) -> str:
        """``approve: yes`` (everything that would ask runs), or ``approve: ask`` with the
        number of ``--allow`` grants: the status line's word."""
        if self.yes:
            return "approve: yes"
        return f"approve: ask (+{len(self.allow)} --allow)" if self.allow else "approve: ask"


NO_GRANTS = Grants()
"""Nothing approved: a call that would ask asks the user, or is denied."""
