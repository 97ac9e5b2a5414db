"""ikigai provider plugin for Google Gemini."""

from ikigai_core import provider_hook

ikigai_provider_serializers = provider_hook("ikigai_provider_google.serializer:GoogleSerializer")
