"""ikigai provider plugin for OpenAI Chat Completions (and compatible servers)."""

from ikigai_core import provider_hook

ikigai_provider_serializers = provider_hook("ikigai_provider_openai.serializer:OpenAISerializer")
