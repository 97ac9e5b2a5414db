"""Default plugin: the system prompt's base, first of every fragment.

``--system TEXT|@FILE`` or ``system_prompt`` in the config (both arrive as
``settings.system_prompt``), else ``$IKIGAI_HOME/system.md``, else :data:`DEFAULT_PROMPT`:
the bash fundamentals for working with external tools (seed 002), how tool results come
back, the working directory and the date.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ikigai_core.defaults.project_instructions import read_text
from ikigai_core.marker import hookimpl

if TYPE_CHECKING:
    from ikigai_core.config import Settings

DEFAULT_PROMPT = """\
You are a capable software agent working through tools. Every tool is an external \
program: you call it with JSON arguments and it answers with one JSON object.

Working directory: {cwd}
Today's date: {date}

## Working with bash
- Look before you change anything: `ls -la`, `head -n 40 FILE`, `wc -l FILE`, `file FILE`. \
Read long files in ranges (file_read with offset and limit).
- Search with grep and glob (or `grep -rn PATTERN DIR`, `find DIR -name '*.py'`); narrow \
the pattern rather than reading everything.
- JSON: use `jq`, e.g. `jq '.items[] | {{name, id}}' data.json`, `jq -r '.name'`, \
`jq length`; pipe a command's JSON into jq instead of reading it by eye.
- git: `git status --short`, `git diff`, `git log --oneline -n 20`, `git show REV:PATH`. \
Do not commit, push or rewrite history unless you are asked to.
- Commands run without a terminal: use non-interactive flags (`git --no-pager`), quote \
paths, and keep output small (`| head`, `| tail`, `wc -l`): long output is cut.

## How tool results come back
`"tool_success": true` means the tool ran; its answer is in `result` (for bash, a non-zero \
`exit_code` is data: the command ran and failed). `"tool_success": false` comes with \
`error` and one `error_code`:
- TOOL_NOT_FOUND: there is no such tool;
- INVALID_PARAMS: the arguments do not fit the tool's schema; fix them and call again;
- TOOL_TIMEOUT: the tool ran too long and was stopped (its partial output is included);
- TOOL_CRASHED: the tool exited with an error (`exit_code`, `stderr`);
- INVALID_OUTPUT: the tool answered with something other than one JSON object, or too much;
- TOOL_DENIED: a policy refused the call (`error` says why); do not repeat it unchanged.
A result with `"truncated": {{"total_bytes": N, "kept_bytes": M}}` was cut to fit: its \
head and tail are kept. Ask for less (a line range, a narrower pattern) to see the rest."""


SHELL_GUIDANCE = {
    "zsh": "The bash tool runs your commands in zsh: bash syntax works, but a glob that "
           "matches nothing is an error (quote it, or add `(N)`) and words are not split "
           "on spaces.",
    "fish": "The bash tool runs your commands in fish, not bash: `set NAME value` (not "
            "`NAME=value`), `(cmd)` (not `$(cmd)`), `$status` (not `$?`), `; and`/`; or` "
            "or `&&`/`||`, no heredocs. The tips below are in bash syntax: translate them.",
    "pwsh": "The bash tool runs your commands in PowerShell (pwsh), not bash: "
            "`Get-ChildItem`, `Get-Content FILE -TotalCount 40`, `Select-String PATTERN`, "
            "`$env:NAME`, `ConvertFrom-Json`, `$LASTEXITCODE`; git works as usual. The tips "
            "below are in bash syntax: translate them.",
}
"""What the default prompt says about the ``shell`` setting's shell (none for sh and bash)."""


def default_prompt(cwd: Path, today: datetime.date | None = None,
                   shell: str | None = None) -> str:
    """:data:`DEFAULT_PROMPT` for ``cwd`` on ``today`` (default: the local date), its shell
    section about ``shell`` (the ``shell`` setting) when that is not sh or bash."""
    prompt = DEFAULT_PROMPT.format(cwd=cwd, date=(today or datetime.date.today()).isoformat())
    guidance = SHELL_GUIDANCE.get(shell or "sh")
    if guidance is None:
        return prompt
    return prompt.replace("## Working with bash\n", f"## Working with {shell}\n{guidance}\n", 1)


@hookimpl(tryfirst=True)
def ikigai_system_prompt(cwd: Path, home: Path, settings: Settings) -> list[str]:
    """The configured prompt, else ``$IKIGAI_HOME/system.md``, else the default."""
    if settings.system_prompt is not None:
        return [settings.system_prompt]
    own = read_text(home / "system.md")
    return [own if own is not None else default_prompt(cwd, shell=settings.shell)]
