"""ikigai's own policy as default plugins, one module each, blockable by module name
with ``IKIGAI_DISABLE_PLUGINS`` like any plugin. This package's ``__init__`` holds only
their list: it imports nothing, so every module that must know a default plugin from a
third party's (a default plugin that raises is ikigai's bug and propagates) may import it."""

DEFAULT_PLUGINS = (
    "ikigai_tools_builtin.builtin",  # the six installed *-tool scripts ("system")
    "ikigai_core.defaults.scanner",  # $IKIGAI_HOME/tools and ./.ikigai/tools
    "ikigai_core.envelope",  # the result envelope; essential
    "ikigai_core.defaults.approvals",  # allow / ask / deny each model-made call
    "ikigai_core.defaults.tool_env",  # provider keys never reach tools; `tool_env`
    "ikigai_core.defaults.sandbox",  # bubblewrap when `sandbox` is set
    "ikigai_core.defaults.system_prompt",  # the default system prompt, or its override
    "ikigai_core.defaults.project_instructions",  # a trusted project's AGENTS.md
    "ikigai_core.defaults.skills",  # $IKIGAI_HOME/skills and ./.ikigai/skills
    "ikigai_core.defaults.stores",  # the SQLite session store
)
ESSENTIAL_PLUGINS = ("ikigai_core.envelope",)


def is_default(plugin: str) -> bool:
    """Whether the plugin called ``plugin`` is one of ikigai's own."""
    return plugin in DEFAULT_PLUGINS
