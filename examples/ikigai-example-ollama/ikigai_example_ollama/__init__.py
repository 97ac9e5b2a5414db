"""Example ikigai plugin: the ``ollama`` provider (``--provider ollama``).

The provider's module loads only when ikigai asks for providers, so the plugin costs
nothing to commands that never talk to a model.
"""

from ikigai_core import provider_hook

ikigai_provider_serializers = provider_hook("ikigai_example_ollama.provider:OllamaProvider")
