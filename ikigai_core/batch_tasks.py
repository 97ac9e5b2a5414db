"""``ikigai batch``'s tasks file: one JSON object a line, every line checked before any runs.

A task names its ``id`` and ``prompt``, and optionally the ``cwd`` copied into its private
work folder, the ``provider`` and ``model``, the ``tools`` sent, a ``budget``, an ``agent``,
and ``allow`` rules approving its tool calls (the syntax of ``--allow``). The file may be
anyone's: every line is validated and each problem is one line naming the line number
(docs/batch.md).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ikigai_core.errors import UsageError
from ikigai_core.record import Record

ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
"""A task id: it names the task's work folder, so a file name without a path in it."""

FIELDS = ("id", "prompt", "cwd", "provider", "model", "tools", "budget", "agent", "allow")
SHOWN_PROBLEMS = 20
"""At most this many problems are listed; the rest are counted."""


class Task(Record):
    """One task of a batch, as its line gave it (``cwd`` resolved against the tasks file).

    :param id: unique in the file; names its result and its work folder.
    :param prompt: what the model is asked.
    :param line: the line of the tasks file it is on.
    :param cwd: the folder copied into the task's private work folder (``None``: it starts
        empty).
    :param provider: the provider (``None``: the configured one).
    :param model: the model (``None``: the provider's configured or default one).
    :param tools: the tools sent (``None``: the configured toolset; ``()``: none).
    :param budget: the task's budget, as the line gave it.
    :param agent: the agent definition it runs as.
    :param allow: rules approving its tool calls, as ``--allow`` takes them.
    """

    id: str
    prompt: str
    line: int = 0
    cwd: Path | None = None
    provider: str | None = None
    model: str | None = None
    tools: tuple[str, ...] | None = None
    budget: dict[str, Any] | None = None
    agent: str | None = None
    allow: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The task as plain data, for a worker process or a Ray task."""
        return {"id": self.id, "prompt": self.prompt, "line": self.line,
                "cwd": None if self.cwd is None else str(self.cwd),
                "provider": self.provider, "model": self.model,
                "tools": None if self.tools is None else list(self.tools),
                "budget": self.budget, "agent": self.agent, "allow": list(self.allow)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Task:
        """The task :meth:`to_json` gave."""
        return cls(**{**data, "cwd": None if data["cwd"] is None else Path(data["cwd"]),
                      "tools": None if data["tools"] is None else tuple(data["tools"]),
                      "allow": tuple(data["allow"])})


def read_tasks(path: Path) -> list[Task]:
    """Every task of the file at ``path``, in order; a :class:`UsageError` listing every
    malformed line (one line each) when any is, so that nothing runs."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the tasks file {path}: {exc.strerror}") from None
    tasks: list[Task] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            task = parse_task(raw, number, base=path.parent)
        except ValueError as exc:
            problems.append(f"{path}:{number}: {exc}")
            continue
        if task.id in seen:
            problems.append(f"{path}:{number}: id '{task.id}' is on line {seen[task.id]} too; "
                            "give each task its own id")
            continue
        seen[task.id] = number
        tasks.append(task)
    if problems:
        raise Problems(problems, "nothing was run; fix the tasks file")
    if not tasks:
        raise UsageError(f"{path} holds no task; write one JSON object a line, "
                         'e.g. {"id": "t1", "prompt": "list the files"}')
    return tasks


class Problems(UsageError):
    """Several problems, one line each (at most :data:`SHOWN_PROBLEMS`, the rest counted),
    then what became of the run; the command line prints each as a line.

    :param problems: one line each.
    :param verdict: the last line: what happened, what to do.
    """

    def __init__(self, problems: Sequence[str], verdict: str) -> None:
        self.lines = list(problems[:SHOWN_PROBLEMS])
        if len(problems) > SHOWN_PROBLEMS:
            self.lines.append(f"... and {len(problems) - SHOWN_PROBLEMS} more")
        self.lines.append(verdict)
        super().__init__("\n".join(self.lines))


def parse_task(raw: bytes, line: int, *, base: Path) -> Task:
    """The task on one line; a ``ValueError`` saying what is wrong with it."""
    from ikigai_core.strictjson import loads

    try:
        data = loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__}, not an object with an id and a prompt")
    for key in data:
        if key not in FIELDS:
            close = difflib.get_close_matches(key, FIELDS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ValueError(f"unknown field '{key}'{hint}; a task has {', '.join(FIELDS)}")
    task_id = _text(data, "id", required=True)
    if not ID.fullmatch(task_id):
        raise ValueError(f"id {task_id!r} is not 1-128 letters, digits, '_', '.' or '-' "
                         "(starting with a letter, digit or '_')")
    prompt = _text(data, "prompt", required=True)
    if not prompt.strip():
        raise ValueError("prompt is empty")
    return Task(id=task_id, prompt=prompt, line=line, cwd=_folder(data, base),
                provider=_text(data, "provider"), model=_text(data, "model"),
                tools=_names(data, "tools"), budget=_budget(data),
                agent=_text(data, "agent"), allow=_rules(data))


def _text(data: dict[str, Any], key: str, *, required: bool = False) -> Any:
    value = data.get(key)
    if value is None:
        if required:
            raise ValueError(f"{key} is missing")
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key} must be a non-empty string")
    return value


def _names(data: dict[str, Any], key: str) -> tuple[str, ...] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{key} must be a list of names, e.g. [\"bash\", \"file_read\"]")
    return tuple(value)


def _rules(data: dict[str, Any]) -> tuple[str, ...]:
    """``allow``: rules as ``--allow`` takes them, each checked now."""
    from ikigai_core.permissions import allow_rule

    specs = _names(data, "allow") or ()
    for spec in specs:
        try:
            allow_rule(spec, "allow")
        except UsageError as exc:
            raise ValueError(str(exc)) from None
    return specs


def _budget(data: dict[str, Any]) -> dict[str, Any] | None:
    """``budget``: ``{tokens, turns, seconds, cost}``, checked now (kept as given)."""
    from ikigai_core.orchestration.limits import parse_budget

    value = data.get("budget")
    try:
        parse_budget(value)
    except UsageError as exc:
        raise ValueError(str(exc)) from None
    return value


def _folder(data: dict[str, Any], base: Path) -> Path | None:
    """``cwd``, taken from the tasks file's folder when relative: an existing folder."""
    text = _text(data, "cwd")
    if text is None:
        return None
    folder = (base / Path(text).expanduser()).resolve()
    if not folder.is_dir():
        raise ValueError(f"cwd {text!r} is not a folder ({folder})")
    return folder

