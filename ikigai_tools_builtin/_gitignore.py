"""A ``.gitignore`` subset for grep: patterns, ``!`` negation, ``dir/`` only, ``/anchored``, ``**``.

Not supported: ``.git/info/exclude`` and the global excludes file.
"""

from __future__ import annotations

import os

from ikigai_tools_builtin._posix import PatternError, glob_part, glob_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable

Active = list  # of (Rules, cut, add): a path ``rel`` below the walk root is ``add + rel[cut:]``


class Rules:
    """The rules of one ``.gitignore`` file, matched against paths relative to its directory.

    All rules are compiled into one alternation, last rule first, so one ``fullmatch`` per
    path finds the rule that decides (a path used to be tried against each rule in turn).
    """

    def __init__(self, text: str) -> None:
        rules = [rule for rule in map(_parse, text.splitlines()) if rule]
        self.rules = rules
        self._negated = [negate for _, negate, _ in reversed(rules)]
        self._any = _combine([regex for regex, _, _ in reversed(rules)])
        self._files = _combine([regex if not dir_only else "(?!)" for regex, _, dir_only
                                in reversed(rules)])

    @classmethod
    def load(cls, directory: str) -> Rules | None:
        """The rules in ``directory/.gitignore``, or ``None`` when it has none we can read."""
        try:
            with open(os.path.join(directory, ".gitignore"), "rb") as file:
                rules = cls(file.read().decode("utf-8", "replace"))
        except OSError:
            return None
        return rules if rules.rules else None

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no rule matches ``rel``)."""
        found = (self._any if is_dir else self._files)(rel)
        if found is None:
            return None
        return not self._negated[(found.lastindex or 1) - 1]


def _combine(regexes: list[str]) -> Callable[[str], re.Match | None]:
    """One ``fullmatch`` over the alternation of ``regexes``; group ``n`` is the ``n``-th."""
    import re  # on first use: ripgrep's search from a repository's top loads no rules

    return re.compile("|".join(f"({regex})" for regex in regexes), re.DOTALL).fullmatch


def _parse(line: str) -> tuple[str, bool, bool] | None:
    """One rule: (regex over the relative path, negated, directories only), or None."""
    if line.endswith("\r"):
        line = line[:-1]
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate or line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    try:
        if "/" in line:
            regex = glob_path(line.lstrip("/"))
        else:
            regex = "(?:.*/)?" + glob_part(line, hidden_literal=False)
    except PatternError:
        return None
    return regex, negate, dir_only


def ignored(rel: str, is_dir: bool, active: Active) -> bool:
    """Whether ``rel`` (relative to the walk root) is ignored; deeper files win, last rule wins."""
    result = None
    for rules, cut, add in active:
        verdict = rules.verdict(add + rel[cut:], is_dir)
        if verdict is not None:
            result = verdict
    return bool(result)


def _repository(dot_git: str) -> bool:
    """Whether ``dot_git`` makes its directory a repository's top, as git decides: a
    ``.git`` file (a worktree's or submodule's link), or a directory holding ``HEAD``; an
    empty ``.git`` (the sandbox's placeholder) is none, and git looks further up."""
    return os.path.isfile(dot_git) or os.path.isfile(os.path.join(dot_git, "HEAD"))


def ancestors(root: str) -> Active:
    """The rules of the ``.gitignore`` files above ``root`` up to its repository's top.

    Outside a git repository (no ``.git`` above ``root``) there are none.
    """
    found: Active = []
    here = os.path.abspath(root)
    up = ""
    while not _repository(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if parent == here:
            return []
        up = os.path.basename(here) + "/" + up
        here = parent
        rules = Rules.load(here)
        if rules:
            found.insert(0, (rules, 0, up))
    return found
