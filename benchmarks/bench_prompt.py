"""System prompt size with 50 skills installed: the index stays bounded.

Run on demand: ``python benchmarks/bench_prompt.py [SKILLS]``. Installs SKILLS (default 50)
Agent Skills with the longest description the format allows (1,024 characters) and a 4 KB
body each in a fresh ``$IKIGAI_HOME``, then prints the system prompt's size in bytes against
the default prompt with no skills (the baseline, same run), what the skills' bodies would have
cost, and the time to build the prompt (reading every skill) against the baseline's.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _timing import interleaved

from ikigai_core.app import App
from ikigai_core.prompt import system_prompt

DESCRIPTION = ("Use this skill when the task involves the example domain; " * 20)[:1024]
BODY = "## Steps\n\n" + "Do one careful thing, then check it.\n" * 110


def install(home: Path, count: int) -> int:
    """``count`` skills under ``home/skills``; returns the bytes of their bodies."""
    for i in range(count):
        folder = home / "skills" / f"skill-{i:02d}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:02d}\ndescription: {DESCRIPTION}\n---\n{BODY}")
    return count * len(BODY.encode())


def main(count: int = 50) -> None:
    """Print the sizes and the build times."""
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as full:
        bodies = install(Path(full), count)

        def build(home: str) -> str:
            return system_prompt(App(environ={"IKIGAI_HOME": home}, cwd=Path(home))) or ""

        base, loaded = len(build(empty).encode()), len(build(full).encode())
        print(f"default prompt, no skills:      {base:>7} bytes (baseline)")
        print(f"with {count} skills (index):      {loaded:>7} bytes "
              f"({loaded / base:.2f}x; {(loaded - base) / count:.0f} bytes per skill)")
        print(f"their bodies, if all were sent: {bodies:>7} bytes "
              f"({(base + bodies) / base:.2f}x)")
        times = interleaved({"none": lambda: build(empty), "full": lambda: build(full)}, 15)
        print(f"build time: {times['none'] * 1000:.1f} ms without skills, "
              f"{times['full'] * 1000:.1f} ms with {count} ({times['full'] / times['none']:.1f}x)")


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:]))
