"""The ``mcp.json`` files: ``{"mcpServers": {"NAME": {...}}}`` as Claude Desktop, Claude Code
and Cursor write them.

A stdio server has ``command`` (and ``args``, ``env``, ``cwd``); a Streamable HTTP server
has ``url`` (and ``headers``). ``${VAR}`` in any string expands from the environment; a
project's file may not read what ``tool_env`` keeps from tools (a provider key, issue 21).
ikigai adds one optional key: ``startupTimeout``, seconds to wait for the server to start
and list its tools (default 10).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ikigai_core import IkigaiError
from ikigai_mcp import DEFAULT_STARTUP_TIMEOUT

SERVER_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,40}")
_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_KEYS = {"command", "args", "env", "cwd", "url", "headers", "startupTimeout", "type"}


class McpConfigError(IkigaiError):
    """An ``mcp.json`` that cannot be used, said in one line with what to do.

    ``server`` names the one server entry at fault, when it is one.
    """

    server: str | None = None


@dataclass(frozen=True)
class ServerConfig:
    """One configured MCP server, ``${VAR}`` already expanded.

    What it shows people (:attr:`where`, and errors through :meth:`unexpand`) has every
    value a ``${VAR}`` gave put back as ``${VAR}``: a key in a URL is never printed.

    :param name: the server's name (tools are called ``NAME__TOOL``).
    :param scope: ``user`` (``$IKIGAI_HOME/mcp.json``) or ``project`` (``./.ikigai/mcp.json``).
    :param command: the stdio server's argv (empty for an HTTP server).
    :param env: variables the stdio server gets on top of the SDK's safe default set.
    :param cwd: the stdio server's working directory.
    :param url: the Streamable HTTP endpoint (``None`` for a stdio server).
    :param headers: HTTP headers sent to it.
    :param startup_timeout: seconds allowed to start and list the tools.
    :param variables: the value of each ``${VAR}`` its entry used, by name.
    :param before: the servers configured before this one (their tools are found first): a
        tool name it shares with one of them is its to report.
    """

    name: str
    scope: str
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    variables: Mapping[str, str] = field(default_factory=dict)
    before: tuple[ServerConfig, ...] = ()

    @property
    def key(self) -> str:
        """What identifies this server's listing: every setting, as canonical JSON."""
        return json.dumps([self.command, dict(self.env), self.cwd, self.url,
                           dict(self.headers)], sort_keys=True)

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "http" if self.url is not None else "stdio"

    @property
    def where(self) -> str:
        """The server for people: its command line or its URL, as written (``${VAR}``)."""
        return self.unexpand(self.url if self.url is not None else " ".join(self.command))

    def unexpand(self, text: str) -> str:
        """``text`` with each value a ``${VAR}`` of this server gave (as is or URL-quoted)
        written ``${VAR}`` again; values too short to be secrets are left alone."""
        from urllib.parse import quote

        from ikigai_core.defaults.tool_env import MIN_KEY_LENGTH

        for var, value in sorted(self.variables.items(), key=lambda item: -len(item[1])):
            if len(value) >= MIN_KEY_LENGTH:
                for form in dict.fromkeys((value, quote(value, safe=""))):
                    text = text.replace(form, f"${{{var}}}")
        return text


def read_raw(path: Path) -> dict[str, Any]:
    """The file's ``mcpServers`` object as written (``{}`` when the file is missing)."""
    from ikigai_core.statefiles import parse_json, read_state

    raw = read_state(path, McpConfigError)  # refused if others could have written it
    if raw is None:
        return {}
    try:
        data = parse_json(raw)
    except ValueError as exc:  # not JSON, not UTF-8, nested too deeply
        raise McpConfigError(f"{path} is not valid JSON ({exc}); fix or delete it") from exc
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f'{path} must hold {{"mcpServers": {{"NAME": {{...}}}}}}; fix it')
    return servers


def load(path: Path, scope: str, environ: Mapping[str, str],
         withheld: Collection[str] = ()) -> list[ServerConfig | McpConfigError]:
    """Every server in ``path``, expanded, in file order; one that cannot be used is its
    error instead (the others still load). A file that cannot be read at all raises.
    A server using a variable of ``withheld`` is such an error."""
    found: list[ServerConfig | McpConfigError] = []
    for name, entry in read_raw(path).items():
        try:
            found.append(parse(name, entry, scope, environ, path, withheld))
        except McpConfigError as exc:
            exc.server = name
            found.append(exc)
    return found


def parse(name: str, entry: Any, scope: str, environ: Mapping[str, str],
          path: Path | str, withheld: Collection[str] = ()) -> ServerConfig:
    """One ``mcpServers`` entry as a :class:`ServerConfig`; ``${VAR}`` may name no
    variable of ``withheld``."""
    where = f"{path}: server '{name}'"
    if not SERVER_NAME_RE.fullmatch(name):
        raise McpConfigError(f"{where}: a server name is 1-40 of A-Z a-z 0-9 _ -; rename it")
    if not isinstance(entry, dict):
        raise McpConfigError(f"{where} must be a JSON object")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise McpConfigError(f"{where}: unknown key '{unknown[0]}'; known keys: "
                             f"{', '.join(sorted(_KEYS))}")
    variables: dict[str, str] = {}
    entry = _expand(entry, environ, where, withheld, variables)
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise McpConfigError(f"{where} needs exactly one of \"command\" (stdio) and \"url\" "
                             "(Streamable HTTP)")
    timeout = entry.get("startupTimeout", DEFAULT_STARTUP_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise McpConfigError(f"{where}: startupTimeout must be a positive number of seconds")
    if has_url:
        return ServerConfig(name, scope, url=_string(entry["url"], where, "url"),
                            headers=_strings(entry.get("headers", {}), where, "headers"),
                            startup_timeout=float(timeout), variables=variables)
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise McpConfigError(f"{where}: args must be a list of strings")
    cwd = entry.get("cwd")
    return ServerConfig(name, scope, command=(_string(entry["command"], where, "command"), *args),
                        env=_strings(entry.get("env", {}), where, "env"),
                        cwd=None if cwd is None else _string(cwd, where, "cwd"),
                        startup_timeout=float(timeout), variables=variables)


def _string(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise McpConfigError(f"{where}: {key} must be a non-empty string")
    return value


def _strings(value: Any, where: str, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise McpConfigError(f"{where}: {key} must be an object of strings")
    return dict(value)


def _expand(value: Any, environ: Mapping[str, str], where: str, withheld: Collection[str],
            used: dict[str, str]) -> Any:
    """``${VAR}`` in every string of ``value``, from ``environ``, each one read recorded in
    ``used``; an unset one, or one of ``withheld``, is an error."""
    if isinstance(value, str):
        def sub(match: re.Match[str]) -> str:
            var = match.group(1)
            if var in withheld:
                raise McpConfigError(
                    f"{where} uses ${{{var}}}, which tool_env keeps from tools (a provider "
                    "key, or left out by config.json); a project's mcp.json may not read it: "
                    "name it in tool_env.include in config.json to allow it")
            if var not in environ:
                raise McpConfigError(f"{where} uses ${{{var}}}, which is not set; set it or "
                                     "edit the server")
            used[var] = environ[var]
            return environ[var]
        return _VAR_RE.sub(sub, value)
    if isinstance(value, list):
        return [_expand(v, environ, where, withheld, used) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, environ, where, withheld, used) for k, v in value.items()}
    return value


def write_raw(path: Path, servers: Mapping[str, Any]) -> None:
    """Write ``{"mcpServers": servers}`` to ``path`` atomically, user-only."""
    from ikigai_core.statefiles import write_private_json

    write_private_json(path, {"mcpServers": dict(servers)})
