"""A sub-agent's budget (issue 25): the core :class:`~ikigai_core.budget.Budget`, read from
the API's JSON and filled from a definition and the settings."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ikigai_core.budget import Budget
from ikigai_core.errors import UsageError

if TYPE_CHECKING:
    from ikigai_core.config import Settings

KINDS = ("tokens", "turns", "seconds", "cost")
"""A budget's keys: ``seconds`` and ``cost`` are numbers, the others integers."""


def parse_budget(value: Any, what: str = "budget") -> Budget:
    """A budget from ``{"tokens": N, "turns": N, "seconds": S, "cost": USD}`` (every key
    optional, ``None`` for none); anything else is a :class:`UsageError` naming the key."""
    if value is None or isinstance(value, Budget):
        return value or Budget()
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be an object with {', '.join(KINDS)}, got {value!r}")
    unknown = sorted(set(value) - set(KINDS))
    if unknown:
        raise UsageError(f"{what} has unknown key '{unknown[0]}'; use {', '.join(KINDS)}")
    limits: dict[str, Any] = {}
    for key, given in value.items():
        if given is None:
            continue
        whole = key in ("tokens", "turns")
        number = isinstance(given, (int, float)) and not isinstance(given, bool)
        if not number or not 0 < given < math.inf or (whole and not float(given).is_integer()):
            raise UsageError(f"{what}.{key} must be a positive "
                             f"{'integer' if whole else 'number'}, got {given!r}")
        limits[key] = int(given) if whole else float(given)
    return Budget(**limits)


def filled(budget: Budget, defaults: Budget) -> Budget:
    """``budget``, each unset limit taken from ``defaults``."""
    return Budget(**{key: getattr(defaults, key) if getattr(budget, key) is None
                     else getattr(budget, key) for key in KINDS})


def child_defaults(settings: Settings) -> Budget:
    """A child's limits when neither its fork nor its definition sets them."""
    return Budget(tokens=settings.agents_budget_tokens, turns=settings.agents_budget_turns,
                  seconds=settings.agents_budget_seconds)


def budget_dict(budget: Budget) -> dict[str, Any]:
    """The limits that are set, as JSON."""
    return {key: getattr(budget, key) for key in KINDS if getattr(budget, key) is not None}
