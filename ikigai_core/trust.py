"""Which project directories the user trusts to run their ``.ikigai/tools``.

A cloned repository must not run code just because ikigai was started inside it:
project tools are neither asked for ``--schema`` nor run until ``ikigai trust``.
Trust is keyed by the resolved directory, so a symlink or ``..`` cannot borrow it.
"""

from __future__ import annotations

from pathlib import Path

from ikigai_core.errors import ConfigError
from ikigai_core.project import find_project
from ikigai_core.statefiles import locked, read_json, write_private_json


def untrusted_reason(project: Path) -> str:
    """Why ``project``'s own files are left alone, and the command that lets them in."""
    return f"project directory not trusted; run `ikigai trust {project}`"


def find_project_trust(cwd: Path, home: Path) -> tuple[Path, str | None] | None:
    """The project ``cwd`` is in (:func:`~ikigai_core.project.find_project`) with the reason
    its files are not read (``None``: trusted); ``None`` outside every project."""
    return project_trust(find_project(cwd, ikigai_home=home), home)


def project_trust(project: Path | None, home: Path) -> tuple[Path, str | None] | None:
    """:func:`find_project_trust` for a ``project`` found already (``None``: no project),
    its trust read now: what a call checks as it starts (``CallContext.project``)."""
    if project is None:
        return None
    return project, None if TrustStore(home).is_trusted(project) else untrusted_reason(project)


class TrustStore:
    """The trusted directories, in ``$IKIGAI_HOME/trust.json`` (user-only, locked on change)."""

    def __init__(self, home: Path) -> None:
        self.path = home / "trust.json"

    def directories(self) -> list[Path]:
        """Every trusted directory, resolved, sorted."""
        return [Path(d) for d in self._read()]

    def is_trusted(self, directory: Path) -> bool:
        """True if the resolved ``directory`` was trusted."""
        return str(Path(directory).resolve()) in self._read()

    def trust(self, directory: Path) -> tuple[Path, bool]:
        """Trust ``directory``: its resolved path, and whether it was trusted already."""
        return self._change(directory, add=True)

    def untrust(self, directory: Path) -> tuple[Path, bool]:
        """Stop trusting ``directory``: its resolved path, and whether it was trusted."""
        return self._change(directory, add=False)

    def _read(self) -> list[str]:
        data = read_json(self.path, {"trusted": []})
        trusted = data.get("trusted") if isinstance(data, dict) else None
        if not isinstance(trusted, list) or not all(isinstance(d, str) for d in trusted):
            raise ConfigError(
                f"{self.path} is corrupt (expected {{\"trusted\": [directories]}}); "
                "delete it and trust your project directories again with `ikigai trust DIR`"
            )
        return trusted

    def _change(self, directory: Path, *, add: bool) -> tuple[Path, bool]:
        resolved = Path(directory).resolve()
        with locked(self.path):
            trusted = set(self._read())
            was_trusted = str(resolved) in trusted
            (trusted.add if add else trusted.discard)(str(resolved))
            write_private_json(self.path, {"trusted": sorted(trusted)})
        return resolved, was_trusted
