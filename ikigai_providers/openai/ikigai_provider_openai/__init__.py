"""ikigai provider plugin for OpenAI Chat Completions (and compatible servers).

The serializer's modules load only when ikigai asks for providers, so installing this
plugin costs nothing to commands that never talk to a model (``ikigai tool list``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core import hookimpl

if TYPE_CHECKING:
    from ikigai_provider_openai.serializer import OpenAISerializer


@hookimpl
def ikigai_provider_serializers() -> list[OpenAISerializer]:
    """The OpenAI provider."""
    from ikigai_provider_openai.serializer import OpenAISerializer

    return [OpenAISerializer()]
