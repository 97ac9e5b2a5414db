"""Plugin loading: defaults, entry points, broken plugins, blocking, listing."""

from __future__ import annotations

import pytest

from ikigai_core import hookimpl
from ikigai_core.errors import PluginError, UsageError
from ikigai_core.notices import Notices
from ikigai_core.plugin_info import list_plugins
from ikigai_core.plugins import DEFAULT_PLUGINS, disabled_plugin_names, get_plugin_manager
from ikigai_core.providers import collect_providers, get_provider


def test_defaults_are_registered_by_name():
    pm = get_plugin_manager(load_entry_points=False, environ={})
    assert [name for name in DEFAULT_PLUGINS if pm.get_plugin(name)] == list(DEFAULT_PLUGINS)


def test_disabled_names_are_parsed():
    assert disabled_plugin_names({"IKIGAI_DISABLE_PLUGINS": " a, ,b ,"}) == ["a", "b"]
    assert disabled_plugin_names({}) == []


def test_entry_point_plugin_is_loaded_and_listed(site):
    site("ikigai-acme", "acme", """
        from ikigai_core import hookimpl
        @hookimpl
        def ikigai_tool_sources():
            return []
    """)
    pm = get_plugin_manager(environ={})
    info = {i.name: i for i in list_plugins(pm)}["acme"]
    assert (info.distribution, info.version, info.hooks, info.builtin) == (
        "ikigai-acme", "0.3", ("ikigai_tool_sources",), False)


def test_broken_plugin_is_reported_and_skipped(site, capsys):
    site("ikigai-acme", "acme", "import acme_sdk_that_does_not_exist\n")
    notices = Notices()
    pm = get_plugin_manager(environ={}, notices=notices)
    assert pm.get_plugin("acme") is None
    assert pm.get_plugin("ikigai_core.envelope") is not None
    [notice] = notices
    assert notice.message.startswith(
        "plugin 'acme' (ikigai-acme 0.3) failed to load: "
        "ModuleNotFoundError: No module named 'acme_sdk_that_does_not_exist'")
    assert "skipped. Disable it with IKIGAI_DISABLE_PLUGINS=acme" in notice.message
    assert capsys.readouterr() == ("", "")


def test_plugin_with_misspelled_hook_is_skipped_with_a_hint(site, capsys):
    site("ikigai-acme", "acme", """
        from ikigai_core import hookimpl
        @hookimpl
        def ikigai_tool_source():
            return []
    """)
    notices = Notices()
    pm = get_plugin_manager(environ={}, notices=notices)
    assert pm.get_plugin("acme") is None
    assert ("unknown hook 'ikigai_tool_source' (did you mean 'ikigai_tool_sources'?); skipped"
            in [n.message for n in notices][0])


def test_blocked_entry_point_is_not_even_imported(site):
    site("ikigai-acme", "acme", "raise SystemExit('imported!')\n")
    pm = get_plugin_manager(environ={"IKIGAI_DISABLE_PLUGINS": "acme"})
    assert pm.is_blocked("acme")


def test_a_misspelled_disabled_plugin_is_warned_with_a_suggestion(site):
    site("ikigai-acme", "acme", "")
    notices = Notices()
    pm = get_plugin_manager(
        environ={"IKIGAI_DISABLE_PLUGINS": "acme,ikigai_core.defaults.scaner,zzzz"},
        notices=notices)
    assert pm.is_blocked("acme")
    assert pm.get_plugin("ikigai_core.defaults.scanner") is not None  # the typo blocked nothing
    err = [f"ikigai: {notice.message}" for notice in notices]
    assert err[0] == ("ikigai: IKIGAI_DISABLE_PLUGINS names no plugin "
                      "'ikigai_core.defaults.scaner'; did you mean 'ikigai_core.defaults.scanner'?")
    assert err[1].startswith("ikigai: IKIGAI_DISABLE_PLUGINS names no plugin 'zzzz'; plugins: "
                             "ikigai_tools_builtin.builtin, ")
    assert "acme" in err[1] and len(err) == 2


def test_envelope_cannot_be_disabled():
    with pytest.raises(UsageError, match="essential"):
        get_plugin_manager(environ={"IKIGAI_DISABLE_PLUGINS": "ikigai_core.envelope"})


def FakeProvider(name: str):
    """The real OpenAI provider under another name."""
    from ikigai_provider_openai.serializer import OpenAISerializer

    provider = OpenAISerializer()
    provider.name = name
    return provider


def provider_plugin(*names: str):
    class Plugin:
        @hookimpl
        def ikigai_provider_serializers(self):
            return [FakeProvider(n) for n in names]

    return Plugin()


def test_providers_are_indexed_by_name():
    pm = get_plugin_manager(load_entry_points=False, environ={})
    pm.register(provider_plugin("zeta", "alpha"), name="p1")
    assert list(collect_providers(pm)) == ["alpha", "zeta"]
    assert get_provider(pm, "zeta").name == "zeta"


def test_unknown_provider_lists_the_installed_ones():
    pm = get_plugin_manager(load_entry_points=False, environ={})
    pm.register(provider_plugin("openai", "anthropic"), name="p1")
    with pytest.raises(UsageError, match=r"Unknown provider 'opneai'\. Installed providers: "
                                         r"anthropic, openai\."):
        get_provider(pm, "opneai")
    empty = get_plugin_manager(load_entry_points=False, environ={})
    with pytest.raises(UsageError, match="Installed providers: none") as info:
        get_provider(empty, "openai")
    # names like ikigai-provider-NAME are not on PyPI: anyone could register them
    assert "ikigai-provider-" not in str(info.value)
    assert str(info.value).endswith("`ikigai plugins` lists them); from a checkout of ikigai: "
                                    "pip install -e ikigai_providers/NAME")


def test_duplicate_provider_names_are_an_error_naming_both_plugins():
    pm = get_plugin_manager(load_entry_points=False, environ={})
    pm.register(provider_plugin("openai"), name="ikigai_provider_openai")
    pm.register(provider_plugin("openai"), name="acme")
    with pytest.raises(PluginError, match="'openai' is registered by both "
                                          "'acme' and 'ikigai_provider_openai'"):
        collect_providers(pm)


def test_replacement_envelope_plugin_wins_over_the_default():
    from ikigai_core.outcome import ToolOutcome

    class Plugin:
        @hookimpl
        def ikigai_wrap_result(self, outcome):
            return {"ok": outcome.success}

    pm = get_plugin_manager(load_entry_points=False, environ={})
    pm.register(Plugin(), name="mine")
    assert pm.hook.ikigai_wrap_result(outcome=ToolOutcome("t", result={})) == {"ok": True}


class _Touchy:
    """A module attribute that must never be read through (pluggy's rule)."""

    def __getattr__(self, name):
        raise AssertionError(f"registration read {name!r} through a module attribute")


def test_module_plugins_register_the_same_hooks_as_pluggy_finds():
    import types

    import pluggy

    from ikigai_core import hookspecs
    from ikigai_core.plugins import PluginManager

    module = types.ModuleType("odd_plugin")

    @hookimpl(specname="ikigai_tool_sources")
    def ikigai_sources_under_another_name():
        return []

    @hookimpl(specname="ikigai_tool_sources")
    def sources_without_the_prefix():  # pytest's rule: not a hook
        return []

    @hookimpl(wrapper=True)
    def ikigai_system_prompt():
        return (yield)

    class Holder:
        @staticmethod
        @hookimpl
        def ikigai_commands():
            return []

    module.__dict__.update(
        ikigai_sources=ikigai_sources_under_another_name, sources=sources_without_the_prefix,
        ikigai_system_prompt=ikigai_system_prompt,
        ikigai_commands=Holder.__dict__["ikigai_commands"], touchy=_Touchy(),
        ikigai_status=lambda context: [],  # a function without the marker is no hook
        ikigai_tools_changed="not a function")
    ours, theirs = PluginManager("ikigai"), pluggy.PluginManager("ikigai")
    for pm in (ours, theirs):
        pm.add_hookspecs(hookspecs)
        pm.register(module, name="odd")
        for name in DEFAULT_PLUGINS:
            pm.register(__import__(name, fromlist=["_"]), name=name)

    def hooks(pm):
        return {name: sorted(str(impl.plugin_name) for impl in caller.get_hookimpls())
                for name, caller in vars(pm.hook).items() if not name.startswith("_")}

    found, pluggys = hooks(ours), hooks(theirs)
    # pluggy takes `sources` too; pytest's rule, only the name with the prefix (issue 23)
    assert pluggys.pop("ikigai_tool_sources").count("odd") == 2
    assert found.pop("ikigai_tool_sources").count("odd") == 1
    assert found == pluggys
    assert "odd" in hooks(ours)["ikigai_commands"]
    assert "odd" not in hooks(ours)["ikigai_status"]
