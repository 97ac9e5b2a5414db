"""ikigai provider plugin for Google Gemini.

The serializer's modules load only when ikigai asks for providers, so installing this
plugin costs nothing to commands that never talk to a model (``ikigai tool list``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ikigai_core import hookimpl

if TYPE_CHECKING:
    from ikigai_provider_google.serializer import GoogleSerializer


@hookimpl
def ikigai_provider_serializers() -> list[GoogleSerializer]:
    """The Google Gemini provider."""
    from ikigai_provider_google.serializer import GoogleSerializer

    return [GoogleSerializer()]
