"""How the corpus of real tool schemas (tests/corpus/) goes to each provider.

Usage, from the checkout with the providers installed (``.tox/py/bin/python``)::

    python benchmarks/schema_corpus.py              # this checkout
    python benchmarks/schema_corpus.py --before REV  # also what commit REV sent

For each provider: how many schemas go as is, rewritten, or excluded (left out of the
request with a reason). ``--before`` loads REV's schema code (``git show``, the code
before issue 8 had ``tool_schema``) and judges what it sent with this checkout's
per-provider rules: a schema those rules reject would have made every request 400.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import types
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ikigai_provider_anthropic import rules as anthropic_rules  # noqa: E402
from ikigai_provider_google import rules as google_rules  # noqa: E402
from ikigai_provider_openai import rules as openai_rules  # noqa: E402

from ikigai_core.plugins import get_plugin_manager  # noqa: E402
from ikigai_core.providers import collect_providers  # noqa: E402
from tests.support.corpus import corpus, corpus_tool  # noqa: E402

RULES = {"openai": openai_rules, "anthropic": anthropic_rules, "google": google_rules}
OLD_MODULES = {"openai": "ikigai_providers/openai/ikigai_provider_openai/strict.py",
               "google": "ikigai_providers/google/ikigai_provider_google/schema.py"}


def now() -> dict[str, Counter[str]]:
    """Status counts per provider with this checkout's serializers."""
    providers = collect_providers(get_plugin_manager())
    counts: dict[str, Counter[str]] = {name: Counter() for name in RULES}
    for ident, schema in corpus():
        for name in RULES:
            fit = providers[name].fit_tool(corpus_tool(ident, schema))
            counts[name][fit.status] += 1
            counts[name]["strict"] += bool(fit.declaration and _strict(fit.declaration))
    return counts


def _strict(declaration: Mapping[str, Any]) -> bool:
    return bool(declaration.get("function", {}).get("strict"))


def before(rev: str) -> dict[str, Counter[str]]:
    """What ``rev``'s serializers sent, judged by this checkout's rules."""
    declare = _old_declarations(rev)
    counts: dict[str, Counter[str]] = {name: Counter() for name in RULES}
    for ident, schema in corpus():
        tool = corpus_tool(ident, schema)
        for name in RULES:
            declaration, sent = declare[name](tool)
            if RULES[name].problems(declaration):
                counts[name]["rejected by the API"] += 1
            else:
                counts[name]["as is" if sent == schema else "rewritten"] += 1
                counts[name]["strict"] += _strict(declaration)
    return counts


def _old_declarations(rev: str) -> dict[str, Callable[[Any], tuple[dict[str, Any], Any]]]:
    old = {name: _load(rev, path) for name, path in OLD_MODULES.items()}

    def openai(tool: Any) -> tuple[dict[str, Any], Any]:
        strict = old["openai"].strict_parameters(tool.parameters)
        sent = dict(tool.parameters) if strict is None else strict
        return {"type": "function", "function": {"name": tool.name, "parameters": sent,
                                                 "strict": strict is not None}}, sent

    def anthropic(tool: Any) -> tuple[dict[str, Any], Any]:
        return {"name": tool.name, "input_schema": dict(tool.parameters)}, tool.parameters

    def google(tool: Any) -> tuple[dict[str, Any], Any]:
        sent = old["google"].gemini_parameters(tool.parameters)
        declaration = {"name": tool.name}
        if sent is not None:
            declaration["parameters"] = sent
        return declaration, sent

    return {"openai": openai, "anthropic": anthropic, "google": google}


def _load(rev: str, path: str) -> types.ModuleType:
    source = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    module = types.ModuleType(f"old_{Path(path).stem}")
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)
    return module


def show(title: str, counts: Mapping[str, Counter[str]]) -> None:
    total = sum(counts["anthropic"].values())
    print(f"{title} ({total} schemas)")
    for name, counter in counts.items():
        parts = ", ".join(f"{counter[status]} {status}" for status in
                          ("as is", "rewritten", "excluded", "rejected by the API")
                          if status in counter or status != "rejected by the API")
        strict = f" ({counter['strict']} with strict: true)" if name == "openai" else ""
        print(f"  {name:<10} {parts}{strict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="also count what REV sent")
    args = parser.parse_args()
    if args.before:
        show(f"before ({args.before})", before(args.before))
    show("now", now())


if __name__ == "__main__":
    main()
