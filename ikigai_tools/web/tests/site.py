"""A web site on 127.0.0.1 for the web tools' tests: replies by path, every request kept.

It is the core tests' :class:`~tests.support.fakeserver.FakeServer` (its replies, chunked
streaming, stalls), answering by path instead of from a queue; an unknown path is a 404.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support.fakeserver import FakeServer, RecordedRequest, Reply

TOOL = str(Path(sys.executable).with_name("web_fetch-tool"))


class Site(FakeServer):
    """``site.routes["/path"] = Reply(...)``; ``site.requests`` lists what came in."""

    def __init__(self) -> None:
        super().__init__()
        self.check = None
        self.routes: dict[str, Reply] = {}

    def _take(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
        return self.routes.get(request.path, Reply(404, {"Content-Type": "text/plain"},
                                                   b"not found"))

    def paths(self) -> list[str]:
        """The paths requested, in order."""
        return [r.path for r in self.requests]


def html(body: str, title: str = "Test page") -> Reply:
    """An HTML page."""
    page = f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"
    return Reply(200, {"Content-Type": "text/html; charset=utf-8"}, page.encode())


def run_fetch(arguments: Mapping[str, Any], *, web: Mapping[str, Any] | None = None,
              home: Path, env: Mapping[str, str] | None = None,
              timeout: float = 60) -> dict[str, Any]:
    """Run the installed ``web_fetch-tool`` once, as ikigai does; its JSON answer."""
    child = {**os.environ, "IKIGAI_HOME": str(home), **(env or {})}
    if web is not None:
        child["IKIGAI_WEB_SETTINGS"] = json.dumps(web)
    done = subprocess.run([TOOL], input=json.dumps(arguments), capture_output=True, text=True,
                          env=child, timeout=timeout, check=True)
    return json.loads(done.stdout)


LOCAL = {"allow_private": ["127.0.0.1"]}
"""The setting that lets the tests' own site (127.0.0.1) be fetched."""
