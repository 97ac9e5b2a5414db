"""``ikigai batch``'s results file: one JSON object a line, one line per task, ever.

Only the coordinator writes it (workers hand their results back), each line in one
``write`` followed by ``fsync``, under an exclusive lock: two batches cannot append to one
file, and a rerun skips the ids it holds. A last line without its newline was cut short
by a batch that died while writing it: it is dropped, and that task runs again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ikigai_core.batch_tasks import Problems
from ikigai_core.errors import IkigaiError, UsageError


def default_results(tasks: Path) -> Path:
    """Where results go without ``--out``: beside the tasks file, ``NAME.results.jsonl``."""
    return tasks.with_name(f"{tasks.name.removesuffix('.jsonl')}.results.jsonl")


class ResultsFile:
    """The results file, locked for this process, open for appending.

    :param path: the file (created when missing).
    """

    def __init__(self, path: Path) -> None:
        import fcntl

        self.path = path
        self.created = not path.exists()
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise UsageError(f"cannot open the results file {path}: {exc.strerror}") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._fd)
            raise UsageError(f"another ikigai batch is writing {path}; wait for it, or pass "
                             "--out with another file") from None
        try:
            self.finished, self.dropped = self._read()
        except BaseException:
            self.close()
            raise

    def _read(self) -> tuple[dict[str, dict[str, Any]], bool]:
        """The results already there by task id, and whether a cut-short last line was
        dropped (the file truncated after the last whole line)."""
        data = os.pread(self._fd, os.fstat(self._fd).st_size, 0)
        whole = data[:data.rfind(b"\n") + 1]
        dropped = len(whole) < len(data)
        found: dict[str, dict[str, Any]] = {}
        problems: list[str] = []
        for number, raw in enumerate(whole.splitlines(), 1):
            try:
                result = json.loads(raw)
            except ValueError:
                problems.append(f"{self.path}:{number}: not a JSON line")
                continue
            task_id = result.get("id") if isinstance(result, dict) else None
            if not isinstance(task_id, str):
                problems.append(f"{self.path}:{number}: not a result (no task id)")
            elif task_id in found:
                problems.append(f"{self.path}:{number}: task '{task_id}' has a result already")
            else:
                found[task_id] = result
        if problems:
            raise Problems(problems, "this is not an ikigai batch results file; "
                                     "pass --out with another file")
        if dropped:
            os.ftruncate(self._fd, len(whole))
        return found, dropped

    def append(self, result: dict[str, Any]) -> None:
        """Write one task's result as one line, on disk before this returns."""
        line = memoryview((json.dumps(result, ensure_ascii=False) + "\n").encode("utf-8"))
        try:
            while line:
                line = line[os.write(self._fd, line):]
            os.fsync(self._fd)
        except OSError as exc:
            raise IkigaiError(f"cannot write to the results file {self.path}: {exc.strerror}; "
                              "the batch stopped (run it again to go on)") from None
        self.finished[result["id"]] = result

    def close(self) -> None:
        """Release the lock and the file; one this batch made and wrote nothing to is
        removed (a batch that could not start leaves no empty file)."""
        if self.created and not self.finished:
            self.path.unlink(missing_ok=True)
        os.close(self._fd)
