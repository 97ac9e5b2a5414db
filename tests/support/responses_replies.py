"""The Responses wire's scripted replies, now shipped in pytest-ikigai
(``pytest_ikigai/responses.py``); this path stays for the tests that import it."""

from pytest_ikigai.responses import RESPONSES, USAGE, ResponsesReplies, reasoning_item

__all__ = ["RESPONSES", "USAGE", "ResponsesReplies", "reasoning_item"]
