"""Find tools: scan directories, ask every candidate for its schema in parallel, build
the registry."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_core.defaults import is_default
from ikigai_core.hookcall import collect, one_line
from ikigai_core.notices import Notices
from ikigai_core.record import Record
from ikigai_core.registry import Registry, merge
from ikigai_core.schema_cache import SchemaCache, file_key
from ikigai_core.snapshot import Snapshot
from ikigai_core.tool_directory import DirectorySource as DirectorySource  # its old home
from ikigai_core.tool_schema import validate_schema
from ikigai_core.tools import (
    TOOL_NAME_RE,
    SkippedTool,
    Tool,
    ToolCandidate,
    ToolScan,
    ToolSource,
    source_problem,
)
from ikigai_toolkit.install import processors

if TYPE_CHECKING:
    import pluggy

    from ikigai_core.config import Settings
    from ikigai_core.lifecycle import ProcessSpec

MAX_PARALLEL_SCHEMA_CALLS = 64
"""Threads waiting to start ``--schema`` calls; how many run at once is :class:`_Gate`'s."""
LAST_LINE_SHOWN = 200
"""Characters of a crashed ``--schema``'s last stderr line given as the reason it is skipped."""


def invalid_name(name: str) -> str:
    """Why ``name`` cannot be a tool name (spec decision 3: what every provider accepts)."""
    return f"invalid tool name {name!r}: use 1-64 of A-Z a-z 0-9 _ -"


class SchemaAnswer(Record):
    """What asking a candidate for its schema gave: the schema, or why there is none."""

    schema: Mapping[str, Any] | None = None
    """The validated schema; ``None`` when the tool cannot be used."""
    problem: str = ""
    """Why the tool cannot be used (shown as the reason it is skipped)."""
    transient: bool = False
    """The problem may not hold next time (a signal, a tool that could not start, a
    cancelled discovery, a timeout while starved of processor time): never cached, so the
    next run asks again. Any other timeout is the tool's own: cached like any answer."""
    starved: bool = False
    """It timed out after waiting for a processor for a good part of its budget: it is
    asked once more, alone."""

    @classmethod
    def unusable(cls, problem: str, *, transient: bool = False,
                 starved: bool = False) -> SchemaAnswer:
        """No schema, because of ``problem``."""
        return cls(problem=problem, transient=transient or starved, starved=starved)


STARVED = 0.25
"""Share of the schema budget spent waiting for a processor that earns a timeout a retry."""


class _Gate:
    """Lets ``--schema`` calls start as the machine can run them: no more at once than there
    are processors, counting only calls whose process is running or waiting for a processor.
    A call that sleeps or hangs holds none, so fifty hanging tools still time out together,
    while fifty Python start-ups on two processors take turns instead of spending their time
    budgets waiting for one."""

    def __init__(self) -> None:
        self.limit = processors()
        self.pids: dict[int, int | None] = {}  # thread -> its process, None until it starts
        self.changed = threading.Condition()

    def _busy(self) -> int:
        from ikigai_core.process import is_running

        return sum(1 for pid in self.pids.values() if pid is None or is_running(pid))

    def __enter__(self) -> Callable[[int], None]:
        with self.changed:
            while self._busy() >= self.limit:
                self.changed.wait(0.01)
            self.pids[threading.get_ident()] = None
        return self._started

    def _started(self, pid: int) -> None:
        with self.changed:
            self.pids[threading.get_ident()] = pid

    def __exit__(self, *exc_info: object) -> None:
        with self.changed:
            del self.pids[threading.get_ident()]
            self.changed.notify_all()


def ask_schema(
    candidate: ToolCandidate, settings: Settings,
    prepare_process: Callable[[ProcessSpec], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> SchemaAnswer:
    """Run ``TOOL --schema`` (stdin /dev/null, stderr drained and dropped), as
    ``prepare_process`` (the ``ikigai_tool_process`` hook) leaves its command line.

    :returns: the validated schema, or the reason it is unusable.
    """
    from ikigai_core.lifecycle import ProcessSpec
    from ikigai_core.process import run_process, start_failure

    spec = ProcessSpec(candidate.name, "schema", [*candidate.command, "--schema"],
                       dict(os.environ))
    if prepare_process is not None:
        prepare_process(spec)
    try:
        ran = run_process(
            spec.argv,
            stdin=None,
            timeout=settings.schema_timeout,
            max_stdout=settings.schema_max_bytes,
            max_stderr=1024,
            cwd=spec.cwd,
            env=spec.env,
            kill_grace=0,  # a timed-out --schema has nothing worth saving: SIGKILL at once
            on_start=on_start,
        )
    except OSError as exc:
        return SchemaAnswer.unusable(
            f"cannot run --schema: {start_failure(spec.argv[0], exc)}", transient=True)
    if ran.timed_out:
        return SchemaAnswer.unusable(
            f"--schema timed out after {settings.schema_timeout:g} s",
            starved=ran.starved >= STARVED * settings.schema_timeout)
    if ran.overflowed:
        return SchemaAnswer.unusable(
            f"--schema printed more than {settings.schema_max_bytes} bytes")
    if ran.exit_code != 0:
        reason = f"--schema crashed with exit code {ran.exit_code}{_last_line(ran.stderr)}"
        return SchemaAnswer.unusable(reason, transient=ran.exit_code > 128)  # > 128: a signal
    from ikigai_core.strictjson import loads_object  # lazy: a warm start-up parses no schema

    try:
        schema = loads_object(ran.stdout)
    except ValueError as exc:
        return SchemaAnswer.unusable(f"--schema {exc}")
    problem = validate_schema(schema)
    return SchemaAnswer.unusable(problem) if problem else SchemaAnswer(schema)


def _last_line(stderr: bytes) -> str:
    """``": <the last line the tool wrote on stderr>"``, or nothing when it wrote none."""
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return f": {lines[-1].strip()[:LAST_LINE_SHOWN]}" if lines else ""


def _tool(candidate: ToolCandidate, schema: Mapping[str, Any], source: ToolSource) -> Tool:
    return Tool(
        name=candidate.name,
        description=schema["description"],
        parameters=schema["parameters"],
        command=candidate.command,
        source=source.name,
        path=candidate.path,
        schema=schema,
        runner=candidate.runner,
    )


def collect_sources(
    pm: pluggy.PluginManager, *, home: Path, cwd: Path, notices: Notices | None = None,
    refresh: bool = False, prepare_process: Callable[[ProcessSpec], None] | None = None,
) -> list[tuple[str, ToolSource]]:
    """Every source every plugin contributes, with the plugin's name, in plugin order.

    A plugin that raises, or a source without a ``name``, ``precedence`` or ``scan()``,
    is reported in ``notices`` and skipped without hiding the others' tools.
    """
    notices = Notices() if notices is None else notices
    return collect(pm, "ikigai_tool_sources", notices, source_problem, home=home, cwd=cwd,
                   refresh=refresh, prepare_process=prepare_process or _as_is, notices=notices)


def _as_is(spec: ProcessSpec) -> None:
    """No ``ikigai_tool_process`` plugin to ask: the process starts as specified."""


def warm(registry: Registry, notices: Notices) -> None:
    """Start every long-lived tool's process now: each runner's optional ``warm()``, which
    returns at once (a runner shared by many tools does its work once). A runner that
    raises is reported, and its tools start on first use."""
    for tool in registry.values():
        start = getattr(tool.runner, "warm", None)
        if callable(start):
            try:
                start()
            except Exception as exc:
                notices.report(f"tool '{tool.name}' ({tool.source}) could not start in the "
                               f"background: {one_line(exc)}; it starts on first use")


def _candidate_problem(candidate: Any) -> str | None:
    """What keeps ``candidate`` from being a usable :class:`ToolCandidate`, if anything."""
    if not isinstance(candidate, ToolCandidate):
        return f"it found {type(candidate).__name__} {candidate!r:.60}, not a ToolCandidate"
    command = candidate.command
    if (not isinstance(command, (tuple, list)) or not command
            or not all(isinstance(part, str) for part in command)):
        return (f"tool '{candidate.name}' has command {command!r:.60}: give a non-empty "
                "tuple of strings, not one string")
    if candidate.runner is not None and not callable(getattr(candidate.runner, "call", None)):
        return f"tool '{candidate.name}' has a runner without a call() method"
    if candidate.runner is not None and candidate.schema is None:
        return f"tool '{candidate.name}' has a runner but no schema"
    return None


def _scan(plugin: str, source: ToolSource, notices: Notices) -> ToolScan:
    """``source.scan()``, checked: a third party's failure or bad answer is reported."""
    try:
        scan = source.scan()
    except Exception as exc:
        if is_default(plugin):
            raise
        notices.report(f"plugin '{plugin}' failed scanning tool source '{source.name}': "
                       f"{one_line(exc)}; its tools are skipped. "
                       f"Disable it with IKIGAI_DISABLE_PLUGINS={plugin}", plugin=plugin)
        return ToolScan()
    if not isinstance(scan, ToolScan):
        notices.report(f"plugin '{plugin}': tool source '{source.name}' scan() returned "
                       f"{type(scan).__name__}, not a ToolScan; its tools are skipped",
                       plugin=plugin)
        return ToolScan()
    good = []
    for candidate in scan.candidates:
        problem = _candidate_problem(candidate)
        if problem is None:
            good.append(candidate)
        else:
            notices.report(f"plugin '{plugin}': tool source '{source.name}': {problem}; "
                           "skipped", plugin=plugin)
    skipped = [s for s in scan.skipped if isinstance(s, SkippedTool)]
    return ToolScan(good, skipped)


def discover(
    pm: pluggy.PluginManager, *, home: Path, cwd: Path, settings: Settings, refresh: bool = False,
    cancelled: threading.Event | None = None, notices: Notices | None = None,
    prepare_process: Callable[[ProcessSpec], None] | None = None,
    extra_sources: Sequence[ToolSource] = (),
) -> Registry:
    """Scan every source (the plugins', then ``extra_sources``: the skills') and build
    the registry.

    Schemas come from the cache when the tool file is unchanged, unless ``refresh``;
    all the others are asked for in parallel (as many at once as the machine can run, see
    :class:`_Gate`), each under the schema time and size budget, with their command line as
    ``prepare_process`` leaves it; a call that timed out while starved of processor time is
    asked once more alone. Once ``cancelled`` is set, no further ``--schema`` call starts.
    Broken plugins are reported in ``notices``.
    """
    notices = Notices() if notices is None else notices
    cache = SchemaCache(home)
    found: list[tuple[int, Tool]] = []
    skipped: list[SkippedTool] = []
    to_ask: list[tuple[ToolSource, ToolCandidate, list[int] | None]] = []
    sources = collect_sources(pm, home=home, cwd=cwd, notices=notices,
                              refresh=refresh, prepare_process=prepare_process)
    for plugin, source in [*sources, *(("ikigai_core.defaults.skills", s) for s in extra_sources)]:
        scan = _scan(plugin, source, notices)
        skipped.extend(scan.skipped)
        for candidate in scan.candidates:
            answer = _known_answer(candidate, cache, refresh)
            if answer is None:
                key = file_key(candidate.path) if candidate.path is not None else None
                to_ask.append((source, candidate, key))
            else:
                _record(source, candidate, answer, found, skipped)
    if to_ask:
        from concurrent.futures import ThreadPoolExecutor  # lazy: a warm cache asks nothing

        gate = _Gate()

        def ask(job: tuple[ToolSource, ToolCandidate, list[int] | None]) -> Any:
            with gate as started:
                return _ask(job[1], settings, cancelled, prepare_process, started)

        workers = min(len(to_ask), MAX_PARALLEL_SCHEMA_CALLS)
        with ThreadPoolExecutor(workers, thread_name_prefix="ikigai-schema") as pool:
            answers = list(pool.map(ask, to_ask))
        answers = [_ask(job[1], settings, cancelled, prepare_process)  # once more, alone
                   if answer.starved else answer
                   for job, answer in zip(to_ask, answers, strict=True)]
        for (source, candidate, key), answer in zip(to_ask, answers, strict=True):
            _record(source, candidate, answer, found, skipped)
            if candidate.path is not None and not answer.transient:
                cache.put(candidate.path, key, **(
                    {"schema": answer.schema} if answer.schema is not None
                    else {"error": answer.problem}))
    try:
        cache.save()
    except OSError as exc:
        notices.report(f"cannot write the schema cache {cache.path}: {exc.strerror}; continuing")
    registry = merge(found, skipped)
    if cancelled is None or not cancelled.is_set():  # `refresh` compares with the last whole one
        Snapshot(home).record(registry, notices)
    return registry


def _known_answer(
    candidate: ToolCandidate, cache: SchemaCache, refresh: bool
) -> SchemaAnswer | None:
    """The answer known without running anything: a bad name, a schema the source gave,
    or the cache's for an unchanged file (unless ``refresh``); ``None``: ask the tool."""
    if not TOOL_NAME_RE.fullmatch(candidate.name):  # a plugin's own name, unchecked
        return SchemaAnswer.unusable(invalid_name(candidate.name))
    if candidate.schema is not None:
        problem = cache.checked(candidate.schema)
        return SchemaAnswer.unusable(problem) if problem else SchemaAnswer(candidate.schema)
    cached = cache.get(candidate.path) if candidate.path is not None and not refresh else None
    if cached is None:
        return None
    schema = cached.get("schema")
    return SchemaAnswer(schema) if schema is not None else SchemaAnswer.unusable(cached["error"])


def _ask(
    candidate: ToolCandidate, settings: Settings, cancelled: threading.Event | None,
    prepare_process: Callable[[ProcessSpec], None] | None,
    on_start: Callable[[int], None] | None = None,
) -> SchemaAnswer:
    if cancelled is not None and cancelled.is_set():
        return SchemaAnswer.unusable("discovery was cancelled", transient=True)
    return ask_schema(candidate, settings, prepare_process, on_start)


def _record(
    source: ToolSource,
    candidate: ToolCandidate,
    answer: SchemaAnswer,
    found: list[tuple[int, Tool]],
    skipped: list[SkippedTool],
) -> None:
    if answer.schema is None:
        skipped.append(SkippedTool(candidate.name, source.name, answer.problem, candidate.path))
    else:
        found.append((source.precedence, _tool(candidate, answer.schema, source)))


class DiscoveryState(Enum):
    """Where a background discovery is (seed 000, phase 6)."""

    NOT_STARTED = "not started"
    IN_PROGRESS = "in progress"
    COMPLETE = "complete"
    FAILED = "failed"


class Discovery:
    """Discovery in the background: ``start()`` returns at once, ``wait()`` blocks for the registry.

    An interactive front end starts it before showing its prompt and waits only when a
    tool is first needed. Once the tools are found (and the waiters released), every
    long-lived tool is warmed (:func:`warm`): an MCP server starts before its first call.
    """

    def __init__(
        self, pm: pluggy.PluginManager, *, home: Path, cwd: Path, settings: Settings,
        refresh: bool = False, notices: Notices | None = None,
        prepare_process: Callable[[ProcessSpec], None] | None = None,
        extra_sources: Sequence[ToolSource] = (),
    ) -> None:
        self._cancelled = threading.Event()
        self._notices = notices = Notices() if notices is None else notices
        self._discover = partial(discover, pm, home=home, cwd=cwd, settings=settings,
                                 refresh=refresh, cancelled=self._cancelled, notices=notices,
                                 prepare_process=prepare_process, extra_sources=extra_sources)
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._registry: Registry | None = None
        self._error: BaseException | None = None
        self.state = DiscoveryState.NOT_STARTED

    def start(self) -> None:
        """Begin discovering in a daemon thread; a second call does nothing."""
        with self._lock:
            if self.state is not DiscoveryState.NOT_STARTED:
                return
            self.state = DiscoveryState.IN_PROGRESS
            self._thread = threading.Thread(target=self._run, name="ikigai-discovery", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            self._registry = self._discover()
            self.state = DiscoveryState.COMPLETE
        except BaseException as exc:  # handed to the thread that waits
            self._error = exc
            self.state = DiscoveryState.FAILED
        finally:
            self._done.set()
        if self._registry is not None and not self._cancelled.is_set():
            warm(self._registry, self._notices)

    def cancel(self) -> None:
        """Stop a discovery in progress and return once its thread is done.

        No further ``--schema`` call starts, and the running ones are killed (with every
        other child of this process: call it when leaving, as ``chat`` does on quit).
        """
        from ikigai_core.process import terminate_until

        self._cancelled.set()
        if self._thread is not None and not self._done.is_set():
            terminate_until(self._done.wait)

    def wait(self, timeout: float | None = None) -> Registry | None:
        """The registry (starting discovery if needed); ``None`` if ``timeout`` passed first.

        Re-raises what made discovery fail.
        """
        self.start()
        if not self._done.wait(timeout):
            return None
        if self._error is not None:
            raise self._error
        return self._registry
