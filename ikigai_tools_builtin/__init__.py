"""The six built-in tools (installed as ``*-tool`` scripts) and the default tool sources."""
