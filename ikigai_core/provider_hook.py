"""A provider plugin's whole hook in one line, its provider imported only when asked for."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ikigai_core.marker import hookimpl

if TYPE_CHECKING:
    from ikigai_core.providers import Provider


def provider_hook(target: str) -> Callable[[], list[Provider]]:
    """An ``ikigai_provider_serializers`` implementation giving one instance of the
    provider class ``target`` names (``"package.module:ClassName"``).

    Every installed plugin is imported at every start-up (``ikigai tool list``
    included), so the class's module is imported only when ikigai first asks for
    providers. In the plugin's entry-point module::

        ikigai_provider_serializers = provider_hook("my_plugin.provider:MyProvider")
    """
    @hookimpl
    def ikigai_provider_serializers() -> list[Provider]:
        """The provider ``target`` names."""
        from ikigai_core.entrypoints import load_target

        return [load_target(target)()]

    return ikigai_provider_serializers
