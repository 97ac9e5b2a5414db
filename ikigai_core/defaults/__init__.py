"""ikigai's own policy as default plugins, one module each, blockable by module name
with ``IKIGAI_DISABLE_PLUGINS`` like any plugin (see ``DEFAULT_PLUGINS`` in plugins.py)."""
