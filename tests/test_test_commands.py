"""The README's test commands do what it says: each passes when its tests pass."""

from __future__ import annotations

import configparser
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tox_command(*posargs: str) -> list[str]:
    """The ``[testenv]`` command ``python3 -m tox -- POSARGS`` runs, as tox 4 expands it."""
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    command = tox["testenv"]["commands"].strip()
    default = re.search(r"\{posargs:(.*)\}", command)
    assert default, "tox.ini: the test command takes no posargs"
    given = " ".join(shlex.quote(arg) for arg in posargs) if posargs else default.group(1)
    return shlex.split(command[: default.start()] + given + command[default.end():])


def test_the_default_run_enforces_the_coverage_gate_on_the_fast_tests():
    command = tox_command()
    assert "--cov-fail-under=95" in command
    assert command[command.index("-m") + 1] == "not slow"


def test_the_documented_slow_run_is_not_judged_by_the_coverage_gate():
    """``python3 -m tox -- -m slow`` runs a few tests: the 95 % gate of the whole suite
    would fail it (44 %) although every one of them passed."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "`python3 -m tox -- -m slow`" in readme
    command = tox_command("-m", "slow")
    assert command[command.index("-m") + 1] == "slow"
    assert not any(arg.startswith("--cov-fail-under") for arg in command)


def test_every_test_runs_under_a_timeout(pytestconfig):
    """A hang is a failure, never a stuck run: pytest-timeout is installed (tox.ini) and set."""
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert float(pytestconfig.getini("timeout")) == 120
