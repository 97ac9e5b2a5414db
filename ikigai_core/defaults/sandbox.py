"""Default plugin: run every tool process under bubblewrap (``sandbox``, ``IKIGAI_SANDBOX``).

- ``off`` (default): nothing changes.
- ``read-only``: the whole filesystem is mounted read-only; no network.
- ``workspace-write``: the same, except the working directory and a private ``/tmp`` are
  writable; ``$IKIGAI_HOME``, the working directory's ``.ikigai`` and ``.git`` and the
  ``.ikigai`` of every trusted directory inside it stay read-only whether or not they exist
  (a tool cannot grant itself permissions, plant a trusted tool or a git hook).

``sandbox_network: true`` keeps the network. A mode set while ``bwrap`` is missing or cannot
run here is an error naming the Debian package: no tool runs unsandboxed by surprise.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ikigai_core.errors import ConfigError, IkigaiError
from ikigai_core.marker import hookimpl

if TYPE_CHECKING:
    from ikigai_core.config import Settings
    from ikigai_core.lifecycle import CallContext, ProcessSpec

PACKAGE = "bubblewrap"
PROBE_TIMEOUT = 5.0
_BASE = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
         "--unshare-pid", "--unshare-ipc", "--die-with-parent")


class SandboxUnavailable(IkigaiError):
    """A sandbox mode is set but bubblewrap cannot run here: no tool may run."""


def sandbox_mode(settings: Settings) -> str:
    """The configured mode, checked (a misspelt mode is an error, not ``off``): settings
    read from the configuration are checked as they load, ones built by hand here."""
    from ikigai_core.config import CHOICES  # not on `ikigai --help`'s path

    modes = CHOICES["sandbox"]
    if settings.sandbox not in modes:
        raise ConfigError(f"sandbox must be one of {', '.join(modes)}, got {settings.sandbox!r}; "
                          "fix IKIGAI_SANDBOX or 'sandbox' in config.json")
    return settings.sandbox


def sandbox_shown(settings: Settings) -> str:
    """The mode as a person reads it: ``off``, or with the network (``read-only (no network)``)."""
    mode = sandbox_mode(settings)
    if mode == "off":
        return mode
    return mode + (" (network on)" if settings.sandbox_network else " (no network)")


@hookimpl(tryfirst=True)  # the guards before other plugins' words
def ikigai_status(context: CallContext) -> Sequence[str]:
    """The sandbox for a terminal chat's status line (``sandbox: off``)."""
    return [f"sandbox: {sandbox_shown(context.settings)}"]


@hookimpl(trylast=True)
def ikigai_tool_process(spec: ProcessSpec, context: CallContext) -> None:
    """Wrap ``spec.argv`` in ``bwrap`` for the configured mode (last, after other plugins)."""
    mode = sandbox_mode(context.settings)
    if mode == "off":
        return
    bwrap = usable_bwrap()
    workdir = Path(spec.cwd or context.cwd).resolve()
    keep = [sys.prefix, sys.base_prefix, *(a for a in spec.argv if a.startswith("/"))]
    trusted = _trusted_inside(context.home, workdir) if mode == "workspace-write" else []
    spec.argv = [bwrap, *bwrap_args(mode, workdir, context.home.resolve(),
                                    network=context.settings.sandbox_network, keep=keep,
                                    trusted=trusted), *_agents_api(spec, context), "--",
                 *spec.argv]


def _agents_api(spec: ProcessSpec, context: CallContext) -> list[str]:
    """The agents API's socket directory bound in (``agents_api_sandbox``, default true: a
    private ``/tmp`` would hide it), or its variables taken away (issue 25)."""
    api = spec.env.get("IKIGAI_API")
    if not api:
        return []
    if context.settings.agents_api_sandbox:
        directory = os.path.dirname(api)
        return ["--bind", directory, directory]
    spec.env.pop("IKIGAI_API", None)
    spec.env.pop("IKIGAI_API_TOKEN", None)
    return []


def _trusted_inside(home: Path, workdir: Path) -> list[Path]:
    """The trusted directories below ``workdir``: their ``.ikigai`` would be obeyed."""
    from ikigai_core.trust import TrustStore

    return [d for d in TrustStore(home).directories() if d != workdir and d.is_relative_to(workdir)]


def bwrap_args(
    mode: str, workdir: Path, home: Path, *, network: bool, keep: Sequence[str] = (),
    trusted: Sequence[Path] = (),
) -> list[str]:
    """bubblewrap's options for ``mode`` (``read-only`` or ``workspace-write``).

    The private ``/tmp`` of ``workspace-write`` would hide a tool, or the Python running it,
    installed under ``/tmp``: the top folder under ``/tmp`` of each path in ``keep`` stays
    visible, read-only. ``home``, ``workdir``'s ``.git`` and ``.ikigai`` and the ``.ikigai``
    of each ``trusted`` directory stay read-only (:func:`read_only`).
    """
    args = list(_BASE)
    if not network:
        args.append("--unshare-net")
    if mode == "workspace-write":
        args += ["--tmpfs", "/tmp"]
        for kept in _under_tmp(keep):
            args += ["--ro-bind-try", kept, kept]
        args += ["--bind", str(workdir), str(workdir)]
        args += read_only(home, workdir, directory=True)
        if not workdir.is_relative_to(home):  # in $IKIGAI_HOME all is read-only already
            args += read_only(workdir / ".git", workdir, directory=True)
            for project in (workdir, *trusted):
                args += read_only(project / ".ikigai", workdir, directory=False)
    return [*args, "--chdir", str(workdir)]


def read_only(path: Path, workdir: Path, *, directory: bool) -> list[str]:
    """bubblewrap's options keeping ``path`` read-only whether or not it exists.

    A missing path inside the writable ``workdir`` gets a read-only placeholder. A mount
    needs a mount point, so bubblewrap makes one on the real filesystem, and it stays: an
    empty directory when ``directory`` (git takes an empty ``.git`` for no repository and
    looks further up), else an empty file (``.ikigai``: a file marks no project). A missing
    path elsewhere, or in a directory ikigai may not write, is read-only already: nothing
    inside can create it. A symbolic link inside ``workdir`` is refused: a mount lands on
    its target, and the link itself could be replaced.
    """
    target = str(path)
    inside = path.is_relative_to(workdir)
    if inside and path.is_symlink():
        raise SandboxUnavailable(
            f"{path} is a symbolic link, which the sandbox cannot keep read-only (a tool could "
            "replace it): no tool will run. Replace the link with what it points to, or set "
            "IKIGAI_SANDBOX=off")
    if path.exists():
        return ["--ro-bind", target, target]
    if not inside or not os.access(path.parent, os.W_OK):
        return []
    if directory:
        return ["--tmpfs", target, "--remount-ro", target]
    return ["--ro-bind", "/dev/null", target]


def _under_tmp(paths: Sequence[str]) -> list[str]:
    """``/tmp/TOP`` for each of ``paths`` (as given and resolved) that lies under ``/tmp``."""
    tops: dict[str, None] = {}
    for path in paths:
        for form in {Path(path), Path(path).resolve()}:
            parts = form.parts
            if len(parts) > 2 and parts[:2] == ("/", "tmp"):
                tops[f"/tmp/{parts[2]}"] = None
    return list(tops)


@lru_cache(maxsize=1)
def usable_bwrap() -> str:
    """The path of a ``bwrap`` that can build a sandbox here, tried once per process."""
    import shutil  # lazy, as subprocess: every start-up loads this plugin, few use the sandbox
    import subprocess

    bwrap = shutil.which("bwrap")
    if bwrap is None:
        _refuse("bwrap is not installed")
    try:
        probe = subprocess.run([bwrap, *_BASE, "--unshare-net", "true"], capture_output=True,
                               timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _refuse(f"bwrap cannot run ({exc})")
    if probe.returncode != 0:
        why = " ".join(probe.stderr.decode(errors="replace").split()) or f"exit {probe.returncode}"
        _refuse(f"bwrap cannot build a sandbox here ({why})")
    return bwrap


def _refuse(why: str) -> NoReturn:
    raise SandboxUnavailable(
        f"a sandbox is configured but {why}: no tool will run. Install the Debian package "
        f"{PACKAGE} (apt-get install {PACKAGE}), or set IKIGAI_SANDBOX=off")
