"""What the real APIs refuse, now shipped in pytest-ikigai (``pytest_ikigai/api_rules.py``);
this path stays for the tests that import it."""

from pytest_ikigai.api_rules import refusal

__all__ = ["refusal"]
