"""web.fetch_only_seen_urls: what the web plugin's URL rule costs one web_fetch call.

Run: ``python benchmarks/bench_web_seen.py`` (or ``python benchmarks/run.py web_seen``).
A conversation of 50 fetched pages (each about 18,500 characters, 250 relative links and
250 absolute URLs) is searched, newest message first, for a URL of the latest page (the
usual fetch: stops at the first message) and for one that is nowhere (a refusal: every
URL of the conversation is read). Each is printed as the median of interleaved rounds, and
what the first costs per page the conversation holds.
"""

from __future__ import annotations

import os

from _timing import interleaved, ms
from ikigai_tools_web.seen import key, seen_in

from ikigai_core import AssistantMessage, ToolCall, ToolResult, ToolResultsMessage, UserMessage

ROUNDS = int(os.environ.get("IKIGAI_BENCH_ROUNDS", "15"))
PAGES = 50
PAGE = "".join(f"Item {i}, see [link {i}](/docs/page{i}.html) and https://example.org/a/{i}.\n"
               for i in range(250))


def conversation() -> list[object]:
    """The user's prompt, then ``PAGES`` web_fetch turns and their results."""
    messages: list[object] = [UserMessage("start at https://example.org/")]
    for i in range(PAGES):
        call = ToolCall(f"c{i}", "web_fetch", {"url": f"https://example.org/a/{i}"})
        answer = {"final_url": f"https://example.org/a/{i}", "content": PAGE}
        messages += [AssistantMessage(tool_calls=(call,)),
                     ToolResultsMessage((ToolResult(call, {"tool_success": True,
                                                           "result": answer}),))]
    return messages


def main() -> None:
    messages = conversation()

    def finds(url: str) -> object:
        wanted = key(url)
        return lambda: any(wanted in found for found in seen_in(messages))

    medians = interleaved({"a link on the latest page": finds("https://example.org/docs/page7.html"),
                           "a URL nowhere (refused)": finds("https://elsewhere.example/x")},
                          ROUNDS)
    print(f"{PAGES} pages of {len(PAGE)} characters, median of {ROUNDS} rounds:")
    for name, seconds in medians.items():
        print(f"  {name}: {ms(seconds)}")
    print(f"  refused, per page held: {ms(medians['a URL nowhere (refused)'] / PAGES)}")


if __name__ == "__main__":
    main()
