#!{{python}}
"""The {{name}} tool: shout TEXT back in capitals. Try it: ikigai tool test {{name}} '{"text": "hi"}'"""
from ikigai_toolkit import ToolError, tool


@tool
def {{name}}(text: str, times: int = 1) -> dict:
    """Shout TEXT back in capitals.

    :param text: what to shout.
    :param times: how many times to say it.
    """
    if not text.strip():
        raise ToolError("text is empty: give some words to shout", "EMPTY_TEXT")
    return {"output": " ".join([text.upper()] * times)}
