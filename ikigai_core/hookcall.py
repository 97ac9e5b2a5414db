"""Call hooks through pluggy, with one third-party plugin's failure isolated from the rest.

Two shapes of hook, one rule: a plugin that raises, or returns something the core cannot
use, is reported in one line naming it (through :class:`~ikigai_core.notices.Notices`) and
left out; the other plugins' answers stand. A default plugin that raises is ikigai's own
bug and propagates.

- :func:`collect` serves the hooks that gather contributions (tool sources, providers,
  commands, system-prompt fragments). They have no side effects, so after a failure
  each plugin is asked again on its own to find which one is broken.
- :class:`Notifier` serves the hooks called around every tool call, and the envelope
  (``ikigai_wrap_result``). A plugin that raises is found from the traceback and left out
  of that hook for the rest of the process; the plugins that had not yet run are called
  again without it. An envelope that is not a JSON object is traced to the plugin that
  gave it, which is left out the same way.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ikigai_core.defaults import is_default

if TYPE_CHECKING:
    import pluggy

    from ikigai_core.notices import Notices


def one_line(exc: BaseException) -> str:
    """``Type: message`` on one line, for a plugin's exception."""
    message = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {message}"


def _failed(notices: Notices, plugin: str, hook: str, why: str) -> None:
    notices.report(
        f"plugin '{plugin}' failed in {hook}: {why}; skipped. "
        f"Disable it with IKIGAI_DISABLE_PLUGINS={plugin}",
        plugin=plugin,
    )


def collect(
    pm: pluggy.PluginManager,
    hook: str,
    notices: Notices,
    check: Callable[[Any], str | None],
    /,
    **kwargs: Any,
) -> list[tuple[str, Any]]:
    """Every item every plugin's ``hook`` returns (each answer is a list or tuple), with
    the name of the plugin that gave it, in pluggy's call order.

    Each plugin is asked through pluggy's subset caller, so its answer can be told apart
    from the others'; a ``wrapper`` implementation wraps each plugin's answer on its own.
    ``check(item)`` says what is wrong with an item, or ``None``. A plugin that raises or
    answers with something other than a list or tuple is skipped whole; a bad item is
    skipped alone. Each is reported in ``notices``.
    """
    caller = getattr(pm.hook, hook)
    impls = [impl for impl in caller.get_hookimpls() if not (impl.hookwrapper or impl.wrapper)]
    found: list[tuple[str, Any]] = []
    everyone = {impl.plugin_name for impl in impls}
    for impl in reversed(impls):  # pluggy calls the last registered first
        name = impl.plugin_name
        others = [pm.get_plugin(other) for other in everyone - {name}]
        try:
            answers = pm.subset_hook_caller(hook, remove_plugins=others)(**kwargs)
        except Exception as exc:
            if is_default(name):
                raise
            _failed(notices, name, hook, one_line(exc))
            continue
        for answer in answers:
            if not isinstance(answer, (list, tuple)):
                _failed(notices, name, hook, f"it returned {type(answer).__name__}, not a list")
                continue
            for item in answer:
                problem = check(item)
                if problem is None:
                    found.append((name, item))
                else:
                    _failed(notices, name, hook, problem)
    return found


class Notifier:
    """Calls one hook around tool calls; a plugin that raises, or (with ``check``) gives
    the answer of a ``firstresult`` hook that ``check`` refuses, is reported once and left
    out of that hook from then on.

    :param pm: the plugin manager.
    :param hook: the hook's name.
    :param notices: where failures are reported.
    :param check: for a ``firstresult`` hook: what is wrong with its answer, or ``None``.
    """

    def __init__(self, pm: pluggy.PluginManager, hook: str, notices: Notices,
                 check: Callable[[Any], str | None] = lambda answer: None) -> None:
        self.pm = pm
        self.hook = hook
        self.notices = notices
        self.check = check
        self._excluded: set[str] = set()
        self._caller = getattr(pm.hook, hook)

    def __call__(self, **kwargs: Any) -> Any:
        """What pluggy returns: every non-``None`` answer, or a ``firstresult`` hook's first
        (the answers of plugins called before one that raised are lost; they are not
        called twice)."""
        caller = self._caller
        already_called: set[str] = set()
        while True:
            try:
                answer = caller(**kwargs)
            except Exception as exc:
                plugin = culprit(caller, exc)
                if plugin is None or is_default(plugin) or plugin in self._excluded:
                    raise
                why = one_line(exc)
                already_called |= _called_before(caller, plugin)
            else:
                problem = self.check(answer)
                if problem is None:
                    return answer
                plugin, why = self._answerer(caller, kwargs), problem
            _failed(self.notices, plugin, self.hook, why)
            self._excluded.add(plugin)
            self._caller = self._subset(self._excluded)
            caller = self._subset(self._excluded | already_called)

    def _answerer(self, caller: Any, kwargs: dict[str, Any]) -> str:
        """The plugin whose answer ``caller``, a ``firstresult`` hook, returned: each
        third-party one is asked again alone, in pluggy's order, until one answers (the
        defaults always answer a usable value, and are called last)."""
        impls = [impl for impl in reversed(caller.get_hookimpls())
                 if not (impl.hookwrapper or impl.wrapper or is_default(impl.plugin_name))]
        everyone = {impl.plugin_name for impl in getattr(self.pm.hook, self.hook).get_hookimpls()}
        answerer: str = next(impl.plugin_name for impl in impls if self._subset(
            everyone - {impl.plugin_name})(**kwargs) is not None)
        return answerer

    def _subset(self, names: set[str]) -> Any:
        plugins = [self.pm.get_plugin(name) for name in names]
        return self.pm.subset_hook_caller(self.hook, remove_plugins=[p for p in plugins if p])


def _called_before(caller: Any, plugin: str) -> set[str]:
    """The plugins pluggy had already called when ``plugin``'s implementation raised."""
    names = [impl.plugin_name for impl in caller.get_hookimpls()
             if not (impl.hookwrapper or impl.wrapper)]
    return set(names[names.index(plugin) + 1:]) if plugin in names else set()


def culprit(caller: Any, exc: BaseException) -> str | None:
    """The plugin whose implementation of ``caller``'s hook raised ``exc``, if any."""
    codes = {}
    for impl in caller.get_hookimpls():
        function = getattr(impl.function, "__func__", impl.function)
        code = getattr(function, "__code__", None)
        if code is not None:
            codes[code] = impl.plugin_name
    found = None
    tb: types.TracebackType | None = exc.__traceback__
    while tb is not None:
        found = codes.get(tb.tb_frame.f_code, found)
        tb = tb.tb_next
    return found
