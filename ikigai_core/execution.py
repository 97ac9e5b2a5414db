"""The one path every tool call takes: look the tool up, validate its arguments, ask the
``ikigai_before_tool_call`` plugins, run it (a process, or a source's long-lived runner),
classify what happened, tell the ``ikigai_after_tool_call`` plugins, wrap it.

Spec decisions 6-10: JSON arguments on stdin, one JSON object on stdout, every
failure an error code with what the process did; the envelope comes from the
``ikigai_wrap_result`` hook so a plugin can replace it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_core.grants import NO_GRANTS, Grants
from ikigai_core.hookcall import Notifier, culprit, one_line
from ikigai_core.lifecycle import CallContext, CallRecord, ProcessSpec, ToolCallRequest
from ikigai_core.outcome import (
    INVALID_OUTPUT,
    INVALID_PARAMS,
    TOOL_CRASHED,
    TOOL_DENIED,
    TOOL_NOT_FOUND,
    TOOL_TIMEOUT,
    ToolOutcome,
)
from ikigai_core.process import KILL_SCOPE, ProcessResult, run_process, start_failure
from ikigai_core.quickcheck import surely_valid
from ikigai_core.strictjson import _json_type, loads_object, nonfinite_path

if TYPE_CHECKING:
    import pluggy
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from ikigai_core.config import Settings
    from ikigai_core.conversation import Message
    from ikigai_core.decision import CallDecision
    from ikigai_core.notices import Notices
    from ikigai_core.tools import Tool

OUTPUT_CAP = 64 * 1024
"""Bytes of a failed tool's stdout and of its stderr that the failure envelope keeps."""

NOT_STARTED_EXIT_CODE = 126
"""Exit code reported when a tool exists but cannot be started (as shells do)."""

READY_TIMEOUT = 60.0
"""Seconds a runner's ``ready()`` may take (starting or restarting its process) before the
call's own timeout starts anyway."""
STOP_GRACE = 2.0
"""Seconds a runner whose call timed out (or was interrupted) gets to stop it."""
_runner_calls: dict[threading.Event, object | None] = {}
"""The ``cancelled`` of every runner call under way, with its kill scope (``KILL_SCOPE``)."""

_MAX_LISTED_TOOLS = 20
_MAX_RULE_CHARS = 300

# id(tool) -> (weak reference to the tool, its compiled validator); an entry leaves
# with its tool, so an id reused by a later tool never finds a stale validator.
_validators: dict[int, tuple[weakref.ref[Tool], Validator]] = {}


def invalid_params(name: str, reason: str) -> ToolOutcome:
    """The INVALID_PARAMS outcome for a call of ``name``: ``reason`` says what is wrong."""
    return ToolOutcome(name, error=f"Invalid arguments for tool '{name}': {reason}",
                       error_code=INVALID_PARAMS)


def validate_arguments(tool: Tool, arguments: Any) -> str | None:
    """Check ``arguments`` against ``tool.parameters``: what is wrong with them, or ``None``."""
    if not isinstance(arguments, dict):
        return f"they must be a JSON object, got {_json_type(arguments)}"
    where = nonfinite_path(arguments)
    if where is not None:  # a Python caller's NaN: the tool and the audit get strict JSON
        return f"'{_json_path(where)}': NaN and infinity are not JSON numbers"
    if surely_valid(tool.parameters, arguments):  # most calls: no jsonschema import at all
        return None
    from jsonschema.exceptions import best_match  # lazy: `ikigai tool list` never needs it
    from referencing.exceptions import Unresolvable

    try:
        error = best_match(_validator(tool).iter_errors(arguments))
    except Unresolvable as exc:  # the meta-schema cannot see a $ref to nowhere
        return _broken_schema(tool, f"a $ref cannot be resolved ({exc})")
    except RecursionError:
        return _broken_schema(tool, "it refers to itself without end")
    except re.error as exc:  # a hand-edited schema cache can skip the discovery check
        return _broken_schema(tool, f"invalid regular expression ({exc})")
    return None if error is None else _describe(error)


def _broken_schema(tool: Tool, reason: str) -> str:
    return (f"the tool's schema cannot check them: "
            f"{' '.join(reason.split())[:_MAX_RULE_CHARS]}; fix the tool's --schema")


def _validator(tool: Tool) -> Validator:
    cached = _validators.get(id(tool))
    if cached is not None and cached[0]() is tool:
        return cached[1]
    from ikigai_core.tool_schema import validator_class

    validator = validator_class(tool.parameters)(tool.parameters)
    key = id(tool)
    _validators[key] = (weakref.ref(tool, lambda _: _validators.pop(key, None)), validator)
    return validator


def _describe(error: ValidationError) -> str:
    """One line: the field as a JSON path (``items[2].name``) and the rule it breaks."""
    path = list(error.absolute_path)
    if error.validator == "required":
        missing = next(name for name in error.validator_value if name not in error.instance)
        return f"missing required field '{_json_path([*path, missing])}'"
    rule = " ".join(error.message.split())
    if len(rule) > _MAX_RULE_CHARS:
        rule = rule[: _MAX_RULE_CHARS - 3] + "..."
    return f"'{_json_path(path)}': {rule}" if path else rule


def _json_path(parts: list[str | int]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def execute(
    tool: Tool,
    arguments: Mapping[str, Any],
    *,
    settings: Settings,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    prepare_process: Callable[[ProcessSpec], None] | None = None,
) -> ToolOutcome:
    """Run ``tool`` with ``arguments`` (already valid) and classify the outcome.

    A process tool runs in ``cwd`` with ``env`` (default: this process's environment) plus
    ``IKIGAI_MAX_OUTPUT_BYTES`` (and ``IKIGAI_SHELL`` when ``settings.shell`` is set), as
    ``prepare_process`` leaves them (the ``ikigai_tool_process`` hook), under
    ``settings.tool_timeout`` and ``settings.tool_max_output``. A runner tool runs in its
    source's process, under the same budgets.
    """
    if tool.runner is not None:
        return _run_in_runner(tool, arguments, settings)
    child_env = dict(os.environ if env is None else env)
    child_env["IKIGAI_MAX_OUTPUT_BYTES"] = str(settings.tool_max_output)
    if settings.shell:
        child_env["IKIGAI_SHELL"] = settings.shell
    spec = ProcessSpec(tool.name, "call", list(tool.command), child_env,
                       None if cwd is None else Path(cwd))
    if prepare_process is not None:
        prepare_process(spec)
    try:
        result = run_process(
            spec.argv,
            stdin=json.dumps(arguments).encode(),
            timeout=settings.tool_timeout,
            max_stdout=settings.tool_max_output,
            max_stderr=OUTPUT_CAP + 1,  # one byte more tells us the tail was cut
            cwd=spec.cwd,
            env=spec.env,
        )
    except OSError as exc:
        return _not_started(tool, exc)
    return _classify(tool, result, settings)


def cancel_runner_calls(scope: object | None = None) -> None:
    """Tell every runner call under way (with ``scope``, those made under that
    ``KILL_SCOPE``) to stop now (Ctrl-C, SIGTERM): each runner stops soon after its
    ``cancelled`` is set (an MCP server is sent ``notifications/cancelled``)."""
    for cancelled, owner in list(_runner_calls.items()):
        if scope is None or owner is scope:
            cancelled.set()


def _run_in_runner(tool: Tool, arguments: Mapping[str, Any], settings: Settings) -> ToolOutcome:
    """Call a long-lived tool's runner in a worker thread; the executor keeps the budgets.

    The runner's optional ``ready(cancelled)`` (start or restart its process) has a budget
    of its own, at most :data:`READY_TIMEOUT`; the call's timeout starts when it returns.
    """
    runner = tool.runner
    assert runner is not None
    cancelled = threading.Event()
    calling = threading.Event()
    answer: list[ToolOutcome | BaseException] = []
    ready = getattr(runner, "ready", None)
    started = time.monotonic()

    def work() -> None:
        try:
            if ready is not None:
                ready(cancelled)
            calling.set()
            answer.append(runner.call(tool, arguments, timeout=float(settings.tool_timeout),
                                      cancelled=cancelled))
        except BaseException as exc:  # handed to the waiting thread
            answer.append(exc)
            calling.set()

    worker = threading.Thread(target=work, name=f"ikigai-runner-{tool.name}", daemon=True)
    _runner_calls[cancelled] = KILL_SCOPE.get()
    try:
        worker.start()
        calling.wait(READY_TIMEOUT)
        worker.join(settings.tool_timeout)
    finally:
        if not answer:  # timed out or interrupted: the runner gets a moment to stop the call
            cancelled.set()
            worker.join(STOP_GRACE)
        _runner_calls.pop(cancelled, None)
    elapsed = time.monotonic() - started
    if cancelled.is_set():
        message = f"Tool '{tool.name}' timed out after {float(settings.tool_timeout)} s"
        return ToolOutcome(tool.name, error=message, error_code=TOOL_TIMEOUT, elapsed=elapsed)
    outcome = answer[0]
    if isinstance(outcome, BaseException):
        message = f"Tool '{tool.name}' failed in its {tool.source} session: {one_line(outcome)}"
        return ToolOutcome(tool.name, error=message, error_code=TOOL_CRASHED, elapsed=elapsed)
    if outcome.success and len(json.dumps(outcome.result).encode()) > settings.tool_max_output:
        return ToolOutcome(tool.name, error=_overflow_message(tool, settings),
                           error_code=INVALID_OUTPUT, elapsed=elapsed)
    return outcome


def _not_started(tool: Tool, exc: OSError) -> ToolOutcome:
    """The tool's process could not be started: gone (TOOL_NOT_FOUND) or broken (TOOL_CRASHED)."""
    program = tool.command[0]
    if exc.errno == errno.ENOENT and exc.filename == program and not os.path.exists(program):
        return ToolOutcome(
            tool=tool.name,
            error=f"Tool '{tool.name}' is no longer at {tool.location}; run `ikigai refresh`",
            error_code=TOOL_NOT_FOUND,
        )
    return ToolOutcome(
        tool=tool.name,
        error=f"Tool '{tool.name}' could not be started: {start_failure(program, exc)}",
        error_code=TOOL_CRASHED,
        exit_code=NOT_STARTED_EXIT_CODE,
        stdout="",
        stderr="",
    )


def _classify(tool: Tool, result: ProcessResult, settings: Settings) -> ToolOutcome:
    name = tool.name
    if result.timed_out:
        message = f"Tool '{name}' timed out after {float(settings.tool_timeout)} s"
        return _failure(tool, result, TOOL_TIMEOUT, message)
    if result.overflowed:
        return _failure(tool, result, INVALID_OUTPUT, _overflow_message(tool, settings))
    if result.exit_code != 0:
        message = f"Tool '{name}' crashed with exit code {result.exit_code}"
        return _failure(tool, result, TOOL_CRASHED, message)
    try:
        value = loads_object(result.stdout)
    except ValueError as exc:
        message = f"Tool '{name}' returned invalid output: {exc}; a tool must print one JSON object"
        return _failure(tool, result, INVALID_OUTPUT, message)
    return ToolOutcome(tool=name, result=value, elapsed=result.elapsed)


def _overflow_message(tool: Tool, settings: Settings) -> str:
    return (f"Tool '{tool.name}' printed more than {settings.tool_max_output} bytes (the output "
            "limit; raise it with IKIGAI_TOOL_MAX_OUTPUT or tool_max_output in config.json)")


def _failure(tool: Tool, result: ProcessResult, code: str, message: str) -> ToolOutcome:
    return ToolOutcome(
        tool=tool.name,
        error=message,
        error_code=code,
        exit_code=result.exit_code,
        stdout=_cap_head(result.stdout),
        stderr=_cap_tail(result.stderr),
        elapsed=result.elapsed,
    )


def _cap_head(data: bytes) -> str:
    """The first :data:`OUTPUT_CAP` bytes, with a marker saying how many were cut."""
    text = data[:OUTPUT_CAP].decode("utf-8", errors="replace")
    cut = len(data) - OUTPUT_CAP
    return text + f"\n[... {cut} bytes cut ...]" if cut > 0 else text


def _cap_tail(data: bytes) -> str:
    """The last :data:`OUTPUT_CAP` bytes, with a marker when earlier ones were dropped."""
    if len(data) <= OUTPUT_CAP:
        return data.decode("utf-8", errors="replace")
    return "[... earlier bytes cut ...]\n" + data[-OUTPUT_CAP:].decode("utf-8", errors="replace")


class CallResult(NamedTuple):
    """A finished call: what happened, and the envelope the model receives (a named tuple:
    a tenth of a dataclass's cost to define, paid by every ``tool run``)."""

    outcome: ToolOutcome
    envelope: dict[str, Any]


class ToolExecutor:
    """Runs tool calls for one invocation, every one along the same path.

    :param pm: the plugin manager whose lifecycle and envelope hooks are called.
    :param context: where and for whom the calls run.
    :param notices: where a failing plugin is reported.
    :param process_hook: the ``ikigai_tool_process`` caller to share with discovery (so a
        failing plugin is reported once per invocation); made here when not given.
    """

    def __init__(
        self, pm: pluggy.PluginManager, context: CallContext, notices: Notices,
        process_hook: Notifier | None = None,
    ) -> None:
        self.pm = pm
        self.context = context
        self.notices = notices
        self._after = Notifier(pm, "ikigai_after_tool_call", notices)
        self._wrap = Notifier(pm, "ikigai_wrap_result", notices, check=_not_an_envelope)
        self._process = (Notifier(pm, "ikigai_tool_process", notices) if process_hook is None
                         else process_hook)

    def call(
        self,
        registry: Mapping[str, Tool],
        name: str,
        arguments: Any,
        *,
        call_id: str | None = None,
        unparsed: str | None = None,
        prepare: Callable[[Tool, Mapping[str, Any]], Mapping[str, Any]] | None = None,
        conversation: tuple[Message, ...] | None = None,
        grants: Grants = NO_GRANTS,
    ) -> CallResult:
        """Run one call of tool ``name`` and wrap what happened.

        :param registry: the tools, looked up once.
        :param arguments: the JSON arguments the model (or user) sent.
        :param call_id: the provider's id for the call.
        :param unparsed: why the arguments could not be read at all (then nothing runs).
        :param prepare: undoes a provider's schema changes in the arguments (OpenAI's nulls).
        :param conversation: the messages of the conversation the call comes from, for
            ``ikigai_before_tool_call`` (``ToolCallRequest.conversation``); ``None``: none.
        :param grants: what the calling session approves without asking
            (``ToolCallRequest.grants``).
        """
        started = time.monotonic()
        tool = registry.get(name)
        if unparsed is not None:
            outcome = invalid_params(name, unparsed)
        elif tool is None:
            outcome = ToolOutcome(name, error=_not_found_message(name, registry),
                                  error_code=TOOL_NOT_FOUND)
        else:
            if prepare is not None and isinstance(arguments, dict):
                arguments = prepare(tool, arguments)
            outcome, arguments = self._run(tool, arguments, call_id, conversation, grants)
        record = CallRecord(name, tool, arguments, outcome, time.monotonic() - started,
                            self.context, call_id)
        self._after(record=record)
        return CallResult(outcome, dict(self._wrap(outcome=outcome)))

    def unrun(self, call_name: str, error: str, error_code: str) -> dict[str, Any]:
        """The envelope of a call that was never started (``error_code`` says why)."""
        return dict(self._wrap(outcome=ToolOutcome(call_name, error=error,
                                                   error_code=error_code)))

    def _run(self, tool: Tool, arguments: Any, call_id: str | None,
             conversation: tuple[Message, ...] | None, grants: Grants
             ) -> tuple[ToolOutcome, Any]:
        problem = validate_arguments(tool, arguments)
        if problem is not None:
            return invalid_params(tool.name, problem), arguments
        decision = self._decide(ToolCallRequest(tool, arguments, self.context, call_id,
                                                conversation, grants))
        if decision is not None and decision.action == "deny":
            message = f"Tool '{tool.name}' was denied: {decision.reason}"
            return ToolOutcome(tool.name, error=message, error_code=TOOL_DENIED), arguments
        if decision is not None and decision.action == "replace":
            arguments = decision.arguments
            problem = validate_arguments(tool, arguments)
            if problem is not None:
                return invalid_params(tool.name, f"{problem} (as replaced by a plugin)"), arguments
        outcome = execute(tool, arguments, settings=self.context.settings, cwd=self.context.cwd,
                          env=self.context.environ, prepare_process=self.prepare_process)
        return outcome, arguments

    def _decide(self, request: ToolCallRequest) -> CallDecision | None:
        """Every plugin's say on ``request``: a deny wins, then the first replace.

        :class:`CallDecision` is imported only when a plugin answered or failed: in a call no
        plugin judges (every ``ikigai tool run``) its dataclass is never defined."""
        try:
            answers = self.pm.hook.ikigai_before_tool_call(request=request)
        except Exception as exc:  # fail closed: a broken gatekeeper lets nothing through
            plugin = culprit(self.pm.hook.ikigai_before_tool_call, exc) or "a plugin"
            self.notices.report(f"plugin '{plugin}' failed in ikigai_before_tool_call: "
                                f"{one_line(exc)}; the call was denied", plugin=plugin)
            return _deny(f"plugin '{plugin}' failed while checking the call")
        if not answers:
            return None
        from ikigai_core.decision import CallDecision

        decisions = [a for a in answers if isinstance(a, CallDecision)]
        if len(decisions) < len(answers):
            return CallDecision.deny("a plugin answered with something other than a CallDecision")
        for action in ("deny", "replace"):
            for decision in decisions:
                if decision.action == action:
                    return decision
        return None

    def prepare_process(self, spec: ProcessSpec) -> None:
        """Let the ``ikigai_tool_process`` plugins change ``spec`` before it starts."""
        self._process(spec=spec, context=self.context)


def _not_an_envelope(answer: Any) -> str | None:
    """What is wrong with an ``ikigai_wrap_result`` answer (``None``: a JSON object)."""
    return None if isinstance(answer, Mapping) else (
        f"it returned {type(answer).__name__}, not a JSON object")


def _deny(reason: str) -> CallDecision:
    from ikigai_core.decision import CallDecision

    return CallDecision.deny(reason)


def _not_found_message(name: str, registry: Mapping[str, Tool]) -> str:
    names = sorted(registry)
    if not names:
        return f"Tool '{name}' not found. No tools are available; see `ikigai tool list --verbose`"
    listed = ", ".join(names[:_MAX_LISTED_TOOLS])
    if len(names) > _MAX_LISTED_TOOLS:
        listed += f" and {len(names) - _MAX_LISTED_TOOLS} more"
    return f"Tool '{name}' not found. Available tools: {listed}"
