"""Example ikigai plugin: the ``ollama`` provider (``--provider ollama``).

The provider's module loads only when ikigai asks for providers, so the plugin costs
nothing to commands that never talk to a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core import hookimpl

if TYPE_CHECKING:
    from ikigai_example_ollama.provider import OllamaProvider


@hookimpl
def ikigai_provider_serializers() -> list[OllamaProvider]:
    """The Ollama provider."""
    from ikigai_example_ollama.provider import OllamaProvider

    return [OllamaProvider()]
