"""The registry: every usable tool by name, merged from all sources by precedence."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Generic, TypeVar

from ikigai_core.tools import SkippedTool, Tool

if TYPE_CHECKING:
    from typing import Protocol

    class _Named(Protocol):
        @property
        def name(self) -> str: ...

Item = TypeVar("Item", bound="_Named")
Skipped = TypeVar("Skipped")


class ByName(Mapping[str, Item], Generic[Item, Skipped]):
    """An immutable mapping of items by their ``name``, sorted, plus those that were skipped
    (and why): the tools' :class:`Registry`, the skills' and the agent definitions' indexes.

    Built once and never changed afterwards, so any number of threads may read it without a
    lock.
    """

    def __init__(self, items: Iterable[Item] = (), skipped: Iterable[Skipped] = ()) -> None:
        self._items = MappingProxyType({i.name: i for i in sorted(items, key=lambda i: i.name)})
        self.skipped: tuple[Skipped, ...] = tuple(skipped)

    def __getitem__(self, name: str) -> Item:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class Registry(ByName[Tool, SkippedTool]):
    """An immutable, name-sorted mapping of tools, plus the tools that were skipped.

    Built once per discovery; ``ikigai refresh`` builds a new one.
    """

    def why_missing(self, name: str) -> str | None:
        """Why tool ``name`` was found but not loaded (broken, untrusted), if it was."""
        for skipped in self.skipped:
            if skipped.name == name and skipped.kind != "ignored":
                return f"tool '{name}' ({skipped.source}) was not loaded: {skipped.reason}"
        return None

    def __repr__(self) -> str:
        return f"Registry({list(self)!r}, skipped={len(self.skipped)})"


def merge(found: Sequence[tuple[int, Tool]], skipped: Iterable[SkippedTool] = ()) -> Registry:
    """Keep, for each name, the tool of the highest-precedence source (spec decision 2).

    ``found`` holds ``(precedence, tool)`` pairs; a tool that loses to another of the
    same name is recorded as skipped (``ignored``) so ``--verbose`` can show the override.
    """
    winners: dict[str, tuple[int, Tool]] = {}
    overridden: list[SkippedTool] = []
    for precedence, tool in sorted(found, key=lambda pair: pair[0]):
        previous = winners.get(tool.name)
        if previous is not None:
            overridden.append(
                SkippedTool(
                    name=tool.name,
                    source=previous[1].source,
                    reason=f"overridden by the {tool.source} tool at {tool.location}",
                    path=previous[1].path,
                    kind="ignored",
                )
            )
        winners[tool.name] = (precedence, tool)
    return Registry((tool for _, tool in winners.values()), [*skipped, *overridden])
