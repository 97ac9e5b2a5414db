"""Run one registry tool: validate its arguments, run it, classify what happened.

Spec decisions 6-10: JSON arguments on stdin, one JSON object on stdout, every
failure an error code with what the process did; the envelope comes from the
``ikigai_wrap_result`` hook so a plugin can replace it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import weakref
from typing import TYPE_CHECKING, Any, Mapping

from ikigai_core.outcome import (
    INVALID_OUTPUT,
    INVALID_PARAMS,
    TOOL_CRASHED,
    TOOL_NOT_FOUND,
    TOOL_TIMEOUT,
    ToolOutcome,
)
from ikigai_core.process import ProcessResult, run_process
from ikigai_core.strictjson import _json_type, loads_object

if TYPE_CHECKING:
    import pluggy
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from ikigai_core.config import Settings
    from ikigai_core.tools import Tool

OUTPUT_CAP = 64 * 1024
"""Bytes of a failed tool's stdout and of its stderr that the failure envelope keeps."""

NOT_STARTED_EXIT_CODE = 126
"""Exit code reported when a tool exists but cannot be started (as shells do)."""

_MAX_LISTED_TOOLS = 20
_MAX_RULE_CHARS = 300

# id(tool) -> (weak reference to the tool, its compiled validator); an entry leaves
# with its tool, so an id reused by a later tool never finds a stale validator.
_validators: dict[int, tuple[weakref.ref[Tool], Validator]] = {}


def validate_arguments(tool: Tool, arguments: Any) -> str | None:
    """Check ``arguments`` against ``tool.parameters``: the INVALID_PARAMS message, or ``None``."""
    if not isinstance(arguments, dict):
        return (
            f"Arguments for tool '{tool.name}' must be a JSON object, got {_json_type(arguments)}"
        )
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
    if error is None:
        return None
    return f"Invalid arguments for tool '{tool.name}': {_describe(error)}"


def _broken_schema(tool: Tool, reason: str) -> str:
    return (f"Tool '{tool.name}' has a schema its arguments cannot be checked against: "
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
) -> ToolOutcome:
    """Run ``tool`` with ``arguments`` (already valid) and classify the outcome.

    The tool runs in ``cwd`` with ``env`` (default: this process's environment) plus
    ``IKIGAI_MAX_OUTPUT_BYTES``, under ``settings.tool_timeout`` and ``settings.tool_max_output``.
    """
    child_env = dict(os.environ if env is None else env)
    child_env["IKIGAI_MAX_OUTPUT_BYTES"] = str(settings.tool_max_output)
    try:
        result = run_process(
            tool.command,
            stdin=json.dumps(arguments).encode(),
            timeout=settings.tool_timeout,
            max_stdout=settings.tool_max_output,
            max_stderr=OUTPUT_CAP + 1,  # one byte more tells us the tail was cut
            cwd=cwd,
            env=child_env,
        )
    except OSError as exc:
        return _not_started(tool, exc)
    return _classify(tool, result, settings)


def _not_started(tool: Tool, exc: OSError) -> ToolOutcome:
    """The tool's process could not be started: gone (TOOL_NOT_FOUND) or broken (TOOL_CRASHED)."""
    program = tool.command[0]
    if exc.errno == errno.ENOENT and exc.filename == program and not os.path.exists(program):
        return ToolOutcome(
            tool=tool.name,
            error=f"Tool '{tool.name}' is no longer at {tool.location}; run `ikigai refresh`",
            error_code=TOOL_NOT_FOUND,
        )
    reason = f"{exc.strerror} ({exc.filename})" if exc.filename else str(exc)
    return ToolOutcome(
        tool=tool.name,
        error=f"Tool '{tool.name}' could not be started: {reason}",
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
        message = (
            f"Tool '{name}' printed more than {settings.tool_max_output} bytes (the output "
            "limit; raise it with IKIGAI_TOOL_MAX_OUTPUT or tool_max_output in config.json)"
        )
        return _failure(tool, result, INVALID_OUTPUT, message)
    if result.exit_code != 0:
        message = f"Tool '{name}' crashed with exit code {result.exit_code}"
        return _failure(tool, result, TOOL_CRASHED, message)
    try:
        value = loads_object(result.stdout)
    except ValueError as exc:
        message = f"Tool '{name}' returned invalid output: {exc}; a tool must print one JSON object"
        return _failure(tool, result, INVALID_OUTPUT, message)
    return ToolOutcome(tool=name, result=value, elapsed=result.elapsed)


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


def run_call(
    registry: Mapping[str, Tool],
    name: str,
    arguments: Any,
    *,
    settings: Settings,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> ToolOutcome:
    """Look up, validate and run one tool call; what happened, not yet wrapped."""
    tool = registry.get(name)
    if tool is None:
        return ToolOutcome(
            tool=name, error=_not_found_message(name, registry), error_code=TOOL_NOT_FOUND
        )
    problem = validate_arguments(tool, arguments)
    if problem is not None:
        return ToolOutcome(tool=name, error=problem, error_code=INVALID_PARAMS)
    return execute(tool, arguments, settings=settings, cwd=cwd, env=env)


def call_tool(
    pm: pluggy.PluginManager,
    registry: Mapping[str, Tool],
    name: str,
    arguments: Any,
    *,
    settings: Settings,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """:func:`run_call`, wrapped by the ``ikigai_wrap_result`` hook into the model's envelope."""
    outcome = run_call(registry, name, arguments, settings=settings, cwd=cwd, env=env)
    return pm.hook.ikigai_wrap_result(outcome=outcome)


def _not_found_message(name: str, registry: Mapping[str, Tool]) -> str:
    names = sorted(registry)
    if not names:
        return f"Tool '{name}' not found. No tools are available; see `ikigai tool list --verbose`"
    listed = ", ".join(names[:_MAX_LISTED_TOOLS])
    if len(names) > _MAX_LISTED_TOOLS:
        listed += f" and {len(names) - _MAX_LISTED_TOOLS} more"
    return f"Tool '{name}' not found. Available tools: {listed}"
