"""Find tools: scan directories, ask every candidate for its schema in parallel, build
the registry."""

from __future__ import annotations

import os
import stat
import threading
from contextlib import contextmanager
from functools import partial
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence, cast

from ikigai_core.registry import Registry, merge
from ikigai_core.schema_cache import SchemaCache, file_key
from ikigai_core.tool_schema import validate_schema
from ikigai_core.strictjson import loads_object
from ikigai_core.tools import (
    TOOL_NAME_RE,
    TOOL_SUFFIX,
    SkippedTool,
    Tool,
    ToolCandidate,
    ToolScan,
    ToolSource,
    tool_name_from_filename,
)

if TYPE_CHECKING:
    import pluggy

    from ikigai_core.config import Settings

MAX_PARALLEL_SCHEMA_CALLS = 64


def invalid_name(name: str) -> str:
    """Why ``name`` cannot be a tool name (spec decision 3: what every provider accepts)."""
    return f"invalid tool name {name!r}: use 1-64 of A-Z a-z 0-9 _ -"


class DirectorySource:
    """Every executable ``*-tool`` file in one directory (spec decisions 1-3).

    :param directory: the directory to scan; a missing one holds no tools.
    :param name: the source name users see (``system``, ``user``, ``project``, ...).
    :param precedence: higher wins on a name clash.
    :param only: if given, only these file names are considered (the rest is not looked at).
    """

    def __init__(
        self, directory: Path, *, name: str, precedence: int, only: Iterable[str] | None = None
    ) -> None:
        self.directory = Path(directory)
        self.name = name
        self.precedence = precedence
        self.only = None if only is None else frozenset(only)

    def __repr__(self) -> str:
        return f"DirectorySource({str(self.directory)!r}, name={self.name!r})"

    def scan(self) -> ToolScan:
        """List the directory; never runs anything."""
        try:
            filenames = sorted(os.listdir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            return ToolScan()
        except OSError as exc:
            reason = f"cannot read tool directory {self.directory}: {exc.strerror}"
            return ToolScan(skipped=[SkippedTool(self.directory.name, self.name, reason)])
        if self.only is not None:
            filenames = [f for f in filenames if f in self.only]
        candidates: dict[str, ToolCandidate] = {}
        skipped: list[SkippedTool] = []
        for filename in filenames:
            path = self.directory / filename
            problem, kind = self._problem(filename, path)
            name = tool_name_from_filename(filename) if filename.endswith(TOOL_SUFFIX) else filename
            if problem is None and name in candidates:
                problem = f"same tool name as {candidates[name].path}; rename one of them"
            if problem is not None:
                skipped.append(SkippedTool(name, self.name, problem, path, kind))
            else:
                candidates[name] = ToolCandidate(name, (str(path),), path)
        return ToolScan(list(candidates.values()), skipped)

    @staticmethod
    def _problem(filename: str, path: Path) -> tuple[str | None, str]:
        if not filename.endswith(TOOL_SUFFIX):
            return "not a tool: the file name does not end in -tool", "ignored"
        if filename.startswith("."):
            return "hidden file", "ignored"
        try:
            st = path.stat()
        except FileNotFoundError:
            return "dangling symlink: its target does not exist", "invalid"
        except OSError as exc:
            return f"cannot stat: {exc.strerror}", "invalid"
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file", "invalid"
        if not os.access(path, os.X_OK):
            return f"not executable; run chmod +x {path}", "invalid"
        return None, ""


class Transient(str):
    """A reason a schema could not be had that may not hold next time (a timeout, a signal,
    a tool that could not start): never cached, so the next run asks again."""


def ask_schema(candidate: ToolCandidate, settings: Settings) -> Mapping[str, Any] | str:
    """Run ``TOOL --schema`` (stdin /dev/null, stderr drained and dropped).

    :returns: the validated schema, or the reason it is unusable (a :class:`Transient`
        one when the same file may well answer next time).
    """
    from ikigai_core.process import run_process

    try:
        ran = run_process(
            (*candidate.command, "--schema"),
            stdin=None,
            timeout=settings.schema_timeout,
            max_stdout=settings.schema_max_bytes,
            max_stderr=1024,
            kill_grace=0,  # a timed-out --schema has nothing worth saving: SIGKILL at once
        )
    except OSError as exc:
        return Transient(f"cannot run --schema: {exc.strerror or exc}")
    if ran.timed_out:
        return Transient(f"--schema timed out after {settings.schema_timeout:g} s")
    if ran.overflowed:
        return f"--schema printed more than {settings.schema_max_bytes} bytes"
    if ran.exit_code != 0:
        reason = f"--schema crashed with exit code {ran.exit_code}"
        return Transient(reason) if ran.exit_code > 128 else reason  # killed by a signal
    try:
        schema = loads_object(ran.stdout)
    except ValueError as exc:
        return f"--schema {exc}"
    return validate_schema(schema) or schema


def _tool(candidate: ToolCandidate, schema: Mapping[str, Any], source: ToolSource) -> Tool:
    return Tool(
        name=candidate.name,
        description=schema["description"],
        parameters=schema["parameters"],
        command=candidate.command,
        source=source.name,
        path=candidate.path,
        schema=schema,
    )


def collect_sources(
    pm: pluggy.PluginManager, *, home: Path, cwd: Path
) -> list[tuple[str, ToolSource]]:
    """Every source every plugin contributes, with the plugin's name, in plugin order.

    Each plugin is called on its own, so one that raises is reported and skipped
    without hiding the others' tools (a default plugin that raises is our bug: it propagates).
    """
    found: list[tuple[str, ToolSource]] = []
    for impl in pm.hook.ikigai_tool_sources.get_hookimpls():
        kwargs = {"home": home, "cwd": cwd}
        with _guard(impl.plugin_name, "ikigai_tool_sources"):
            sources = cast("Sequence[ToolSource] | None",
                           impl.function(**{arg: kwargs[arg] for arg in impl.argnames}))
            found.extend((impl.plugin_name, source) for source in sources or ())
    return found


@contextmanager
def _guard(plugin: str, what: str) -> Iterator[None]:
    """Report and swallow a third-party plugin's exception; let a default plugin's through."""
    from ikigai_core.plugins import DEFAULT_PLUGINS

    try:
        yield
    except Exception as exc:
        if plugin in DEFAULT_PLUGINS:
            raise
        from ikigai_core.output import warn

        warn(f"plugin '{plugin}' failed in {what}: {type(exc).__name__}: {exc}; its tools are "
             f"skipped. Disable it with IKIGAI_DISABLE_PLUGINS={plugin}")


def discover(
    pm: pluggy.PluginManager, *, home: Path, cwd: Path, settings: Settings, refresh: bool = False,
    cancelled: threading.Event | None = None,
) -> Registry:
    """Scan every source and build the registry.

    Schemas come from the cache when the tool file is unchanged, unless ``refresh``;
    all the others are asked for in parallel, each under the schema time and size budget.
    Once ``cancelled`` is set, no further ``--schema`` call starts.
    """
    cache = SchemaCache(home)
    found: list[tuple[int, Tool]] = []
    skipped: list[SkippedTool] = []
    to_ask: list[tuple[ToolSource, ToolCandidate, list[int] | None]] = []
    for plugin, source in collect_sources(pm, home=home, cwd=cwd):
        scan = ToolScan()
        with _guard(plugin, f"scanning tool source '{source.name}'"):
            scan = source.scan()
        skipped.extend(scan.skipped)
        for candidate in scan.candidates:
            answer: Mapping[str, Any] | str | None = None
            if not TOOL_NAME_RE.fullmatch(candidate.name):  # a plugin's own name, unchecked
                answer = invalid_name(candidate.name)
            elif candidate.schema is not None:
                answer = cache.checked(candidate.schema) or candidate.schema
            elif candidate.path is not None and not refresh:
                cached = cache.get(candidate.path)
                answer = cached and (cached.get("schema") or cached.get("error"))
            if answer is None:
                key = file_key(candidate.path) if candidate.path is not None else None
                to_ask.append((source, candidate, key))
            else:
                _record(source, candidate, answer, found, skipped)
    if to_ask:
        from concurrent.futures import ThreadPoolExecutor  # lazy: a warm cache asks nothing

        workers = min(len(to_ask), MAX_PARALLEL_SCHEMA_CALLS)
        with ThreadPoolExecutor(workers, thread_name_prefix="ikigai-schema") as pool:
            answers = list(pool.map(lambda job: _ask(job[1], settings, cancelled), to_ask))
        for (source, candidate, key), answer in zip(to_ask, answers, strict=True):
            _record(source, candidate, answer, found, skipped)
            if candidate.path is not None and not isinstance(answer, Transient):
                kind = "error" if isinstance(answer, str) else "schema"
                cache.put(candidate.path, key, **{kind: answer})
    try:
        cache.save()
    except OSError as exc:
        from ikigai_core.output import warn

        warn(f"cannot write the schema cache {cache.path}: {exc.strerror}; continuing")
    return merge(found, skipped)


def _ask(
    candidate: ToolCandidate, settings: Settings, cancelled: threading.Event | None
) -> Mapping[str, Any] | str:
    if cancelled is not None and cancelled.is_set():
        return Transient("discovery was cancelled")
    return ask_schema(candidate, settings)


def _record(
    source: ToolSource,
    candidate: ToolCandidate,
    answer: Mapping[str, Any] | str,
    found: list[tuple[int, Tool]],
    skipped: list[SkippedTool],
) -> None:
    if isinstance(answer, str):
        skipped.append(SkippedTool(candidate.name, source.name, answer, candidate.path))
    else:
        found.append((source.precedence, _tool(candidate, answer, source)))


class DiscoveryState(Enum):
    """Where a background discovery is (seed 000, phase 6)."""

    NOT_STARTED = "not started"
    IN_PROGRESS = "in progress"
    COMPLETE = "complete"
    FAILED = "failed"


class Discovery:
    """Discovery in the background: ``start()`` returns at once, ``wait()`` blocks for the registry.

    An interactive front end starts it before showing its prompt and waits only when a
    tool is first needed.
    """

    def __init__(
        self, pm: pluggy.PluginManager, *, home: Path, cwd: Path, settings: Settings,
        refresh: bool = False,
    ) -> None:
        self._cancelled = threading.Event()
        self._discover = partial(discover, pm, home=home, cwd=cwd, settings=settings,
                                 refresh=refresh, cancelled=self._cancelled)
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
