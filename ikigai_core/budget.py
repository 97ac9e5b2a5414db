"""What a session may spend, and the meter that stops it when that is reached (issue 26 §4).

A :class:`Budget` caps tokens, model turns, seconds and US dollars (each optional). A
session's :class:`Meter` counts what it spent since it started, and what its sub-agents
spent (their tokens and dollars count against it too), and is asked before every request to
the model and after every answer: once a limit is reached it raises
:class:`BudgetExceeded`, naming the limit. The seconds limit also stops tools that are
running (the session's cancel path), through :meth:`Meter.deadline`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ikigai_core.errors import IkigaiError
from ikigai_core.outcome import BUDGET_EXCEEDED
from ikigai_core.record import Record

if TYPE_CHECKING:
    from ikigai_core.conversation import Usage

Pricer = Callable[["Usage"], "float | None"]
"""The US dollars a model turn's usage costs; ``None`` when no price is known."""


class Budget(Record):
    """The most a session may spend; ``None`` is no limit.

    :param tokens: input and output tokens, added up over every model turn.
    :param turns: requests to the model.
    :param seconds: wall-clock seconds spent answering prompts (time waiting for the user
        to type is not counted).
    :param cost: US dollars, priced per turn from the provider's usage (cache reads and
        writes at their own prices).
    """

    tokens: int | None = None
    turns: int | None = None
    seconds: float | None = None
    cost: float | None = None

    @property
    def unlimited(self) -> bool:
        """True when no limit is set."""
        return (self.tokens, self.turns, self.seconds, self.cost) == (None,) * 4


class Spent(Record):
    """What a session spent so far: tokens, model turns, seconds, and US dollars (``cost``
    ``None`` once a turn's price was unknown)."""

    tokens: int = 0
    turns: int = 0
    seconds: float = 0.0
    cost: float | None = 0.0


class BudgetExceeded(IkigaiError):
    """The session reached a limit of its :class:`Budget`; ``limit`` names it (``tokens``,
    ``turns``, ``seconds``, ``cost``). The answered part of the prompt is kept and
    recorded; tool calls the model asked for after the limit are not run."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit


LIMITS = ("tokens", "turns", "seconds", "cost")
"""A :class:`Budget`'s limits, in the order they are checked."""
SHARED = ("tokens", "cost")
"""The limits a budget also holds its session's sub-agents to (:meth:`Meter.charge`)."""

RAISE = {"cost": "raise --max-cost (or max_cost in config.json)"}
"""How a user raises a limit the command line sets (named in the line saying it was reached)."""


def _amount(limit: str, value: float) -> str:
    if limit == "cost":
        return f"${value:.4g}"
    if limit == "seconds":
        return f"{value:.1f} s"
    return f"{int(value)} {limit}"


def _plus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


class Meter:
    """Counts what one session spends against its ``budget``.

    :param budget: the limits.
    :param price: prices one model turn's usage (only asked when ``budget.cost`` is set or
        :attr:`spent` is read for its cost).
    """

    def __init__(self, budget: Budget, price: Pricer) -> None:
        self.budget = budget
        self.price = price
        self.spent = Spent()
        """What this session spent itself."""
        self.below = Spent()
        """What its sub-agents spent: tokens and US dollars (:meth:`charge`)."""
        self._since: float | None = None

    def start(self) -> None:
        """A prompt starts: seconds count from now (until :meth:`stop`). With a cost limit
        and no price known for the model, the cost is unknown from the start, so
        :meth:`check` refuses the first request (fail closed)."""
        from ikigai_core.conversation import Usage

        self._since = time.monotonic()
        if self.budget.cost is not None and self.spent.cost is not None \
                and self.price(Usage()) is None:
            self.spent = self.spent.replace(cost=None)

    def stop(self) -> None:
        """The prompt ended: its seconds are added."""
        if self._since is not None:
            self.spent = self.spent.replace(
                seconds=self.spent.seconds + time.monotonic() - self._since)
            self._since = None

    def deadline(self) -> float | None:
        """Seconds left before the seconds limit is reached (``None``: no such limit)."""
        if self.budget.seconds is None:
            return None
        return max(0.0, self.budget.seconds - self._seconds())

    def _seconds(self) -> float:
        running = 0.0 if self._since is None else time.monotonic() - self._since
        return self.spent.seconds + running

    def answered(self, usage: Usage | None) -> None:
        """A model turn ended, having used ``usage`` (``None``: the provider said nothing)."""
        tokens = 0 if usage is None else usage.total
        cost = self.spent.cost
        if cost is not None and usage is not None:
            priced = self.price(usage)
            cost = None if priced is None else cost + priced
        self.spent = self.spent.replace(tokens=self.spent.tokens + tokens,
                                        turns=self.spent.turns + 1, cost=cost)

    def charge(self, tokens: int, cost: float | None) -> None:
        """Count a sub-agent's model turns against this budget: a budget caps the tokens
        and dollars of its session's descendants too (their turns and seconds are their
        own). ``cost`` ``None``: no price is known for them."""
        below = self.below
        self.below = below.replace(tokens=below.tokens + tokens,
                                   cost=_plus(below.cost, cost))

    @property
    def total(self) -> Spent:
        """What the session spent with its sub-agents (their turns and seconds aside)."""
        own, below = self.spent, self.below
        return own.replace(tokens=own.tokens + below.tokens, cost=_plus(own.cost, below.cost))

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` if a limit is reached (called before each request,
        and after each answer that asks for tools)."""
        limit = self.reached()
        if limit is not None:
            raise self.exceeded(limit)

    def reached(self, limits: Iterable[str] = LIMITS) -> str | None:
        """The first of ``limits`` (of :data:`LIMITS`) reached, if any."""
        total = self.total
        spent = {"tokens": total.tokens, "turns": total.turns,
                 "seconds": self._seconds(), "cost": total.cost}
        for limit in limits:
            cap, used = getattr(self.budget, limit), spent[limit]
            if cap is not None and (used is None or used >= cap):
                return limit
        return None

    def exceeded(self, limit: str) -> BudgetExceeded:
        """The error saying ``limit`` was reached, with what was spent."""
        if limit == "cost" and self.total.cost is None:
            return BudgetExceeded(limit, f"{BUDGET_EXCEEDED}: no price is known for this "
                                  "model (or a sub-agent's), so the cost limit cannot be kept; "
                                  "nothing more is sent: choose a model genai-prices knows, "
                                  "or drop --max-cost / max_cost")
        cap = getattr(self.budget, limit)
        used = self._seconds() if limit == "seconds" else getattr(self.total, limit)
        fix = RAISE.get(limit, f"raise the budget's {limit} limit")
        return BudgetExceeded(limit, f"{BUDGET_EXCEEDED}: the {limit} limit of "
                              f"{_amount(limit, cap)} is reached ({_amount(limit, used)} spent); "
                              f"stopped, what was answered is kept; {fix} to go on")


@contextmanager
def metered(meter: Meter, expire: Callable[[], None]) -> Iterator[None]:
    """Count the seconds of the block in ``meter``; call ``expire`` (from another thread)
    when its seconds limit is reached during the block."""
    meter.start()
    left = meter.deadline()
    timer = None if left is None else threading.Timer(left, expire)
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
        meter.stop()
