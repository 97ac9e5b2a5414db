"""ikigai provider plugin for Anthropic Messages."""

from ikigai_core import provider_hook

ikigai_provider_serializers = provider_hook(
    "ikigai_provider_anthropic.serializer:AnthropicSerializer")
