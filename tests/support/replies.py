"""The providers' scripted replies, now shipped in pytest-ikigai (``pytest_ikigai/replies.py``);
this path stays for the tests that import it."""

from pytest_ikigai.replies import (
    REPLIES,
    AnthropicReplies,
    Arguments,
    Call,
    GoogleReplies,
    OpenAIReplies,
    ProviderReplies,
    pieces,
)

__all__ = ["REPLIES", "AnthropicReplies", "Arguments", "Call", "GoogleReplies", "OpenAIReplies",
           "ProviderReplies", "pieces"]
