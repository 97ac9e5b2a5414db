"""ikigai-tools-web: the web tools (``web_fetch``), external ``*-tool`` executables.

Nothing here is imported at ikigai start-up but :mod:`ikigai_tools_web.plugin`, which stays
light; the fetch machinery (httpx, trafilatura, protego) loads only in the tool process.
"""
