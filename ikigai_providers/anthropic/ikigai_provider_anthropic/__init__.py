"""ikigai provider plugin for Anthropic Messages.

The serializer's modules load only when ikigai asks for providers, so installing this
plugin costs nothing to commands that never talk to a model (``ikigai tool list``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core import hookimpl

if TYPE_CHECKING:
    from ikigai_provider_anthropic.serializer import AnthropicSerializer


@hookimpl
def ikigai_provider_serializers() -> list[AnthropicSerializer]:
    """The Anthropic provider."""
    from ikigai_provider_anthropic.serializer import AnthropicSerializer

    return [AnthropicSerializer()]
