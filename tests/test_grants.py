"""Approval grants belong to a session (issue 25, "no silent denials"): two root sessions in
one process never share them, a sub-agent is approved by its parent's, read as each of its
calls is judged. A real provider plugin against a local scripted model, real bash calls."""

from __future__ import annotations

import os
import threading

import pytest

from ikigai_core import App, Grants, Session
from ikigai_core.conversation import ToolResultsMessage
from ikigai_core.errors import UsageError
from ikigai_core.orchestration import Supervisor
from ikigai_core.permissions import allow_rule
from tests.support.agents import scripted_models

TIMEOUT = 30
NOBODY = "bash was not run: it needs approval (default) and nobody can be asked"


@pytest.fixture
def model():
    with scripted_models() as make:
        yield make


def touching(*names: str) -> list:
    """A script making one bash call per name (``touch NAME``), then answering."""
    return [[("bash", {"command": f"touch {name}"})] for name in names] + ["done"]


def in_threads(*work) -> None:
    threads = [threading.Thread(target=each) for each in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
        assert not thread.is_alive(), "a session never answered"


def outcomes(session: Session) -> list[str]:
    """Each tool call of the last prompt: ``ran`` or its error code."""
    return ["ran" if r.envelope["tool_success"] else r.envelope["error_code"]
            for m in session.exchange if isinstance(m, ToolResultsMessage) for r in m.results]


def test_two_sessions_in_one_process_keep_their_own_grants(model, tmp_path):
    m = model({"granted": touching("a1", "a2"), "plain": touching("b1", "b2")})
    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    granted = Session.open(app, "openai", log=False, grants=Grants(yes=True))
    plain = Session.open(app, "openai", log=False)  # nobody to ask, no grants

    in_threads(lambda: granted.send("granted"), lambda: plain.send("plain"))

    assert outcomes(granted) == ["ran"] * 2 and outcomes(plain) == ["TOOL_DENIED"] * 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a1", "a2"]
    denials = [n.message for n in app.notices if n.message.startswith(NOBODY)]
    assert len(denials) == 2


def test_a_child_has_its_parents_allow_and_no_sibling_roots_grants(model, tmp_path):
    m = model({"mine": touching("covered", "uncovered"), "theirs": touching("theirs")})
    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    only_covered = Grants(allow=(allow_rule("bash:/command~^touch covered$", "--allow"),))
    mine = Supervisor(Session.open(app, "openai", log=False, grants=only_covered))
    theirs = Supervisor(Session.open(app, "openai", log=False, grants=Grants(yes=True)))

    child, other = mine.fork("mine"), theirs.fork("theirs")
    [done] = mine.wait([child], TIMEOUT)
    theirs.wait([other], TIMEOUT)

    assert done.status == "done"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["covered", "theirs"]
    assert [n.message for n in app.notices if NOBODY in n.message] == [
        f"agent agent ({child}): {NOBODY}; run again with --yes or --allow bash, or add a "
        "rule: ikigai permissions allow bash"]
    mine.close()
    theirs.close()


def test_a_childs_grants_are_its_parents_now_and_cannot_be_set(model, tmp_path):
    m = model({"quick": ["hi"]})
    app = App(environ={**os.environ, **m.environ}, cwd=tmp_path)
    root = Session.open(app, "openai", log=False)
    sup = Supervisor(root)
    forked = sup.fork("quick")
    child = sup._node(forked).live
    assert child.grants == Grants()
    root.grants = Grants(yes=True)  # chat's /approve yes
    assert child.grants == Grants(yes=True)
    with pytest.raises(UsageError, match="a sub-agent is approved by its parent's grants"):
        child.grants = Grants(yes=True)
    sup.wait([forked], TIMEOUT)
    sup.close()
