"""A settled chat's heap is out of the cyclic collector's sight, only where the program
froze its own start (bin/ikigai does; an embedding program may not)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import pytest

from ikigai_core import App, Session, heap
from tests.support.agents import scripted_models


@pytest.fixture
def unfrozen():
    """The test process as pytest runs it, nothing frozen; and so again afterwards."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_settle_leaves_an_unfrozen_process_as_it_is(unfrozen):
    heap.settle()
    assert gc.get_freeze_count() == 0


def test_a_warmed_session_freezes_what_it_loaded_where_the_start_was_frozen(
        unfrozen, tmp_path):
    gc.freeze()  # as bin/ikigai does once the command line is imported
    loaded_since = [[]]  # what the chat loads after the start: the front end, the client...
    with scripted_models() as make:
        model = make({})
        app = App(environ={**os.environ, **model.environ}, cwd=tmp_path)
        session = Session.open(app, "openai", log=False)
        session.warm().join(60)
    assert "httpx" in sys.modules and "genai_prices" in sys.modules  # warmed, then settled
    assert all(obj is not loaded_since for obj in gc.get_objects())  # frozen: not walked


def test_the_price_table_is_loaded_by_the_warm_up_not_by_the_first_price(tmp_path):
    """genai-prices loads its table (16,000 objects) on the first price: the warm-up loads
    it, so it is settled with the rest instead of walked by every full collection after."""
    script = (
        "import gc\n"
        "gc.freeze()\n"
        "from ikigai_core import heap, prices\n"
        "from ikigai_core.conversation import Usage\n"
        "prices.warm(); prices.warmed(); heap.settle()\n"
        "before = len(gc.get_objects())\n"
        "cost = prices.cost_of('openai', 'gpt-4o', Usage(input_tokens=1000, output_tokens=10))\n"
        "print(cost, len(gc.get_objects()) - before)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    cost, grown = done.stdout.split()
    assert float(cost) > 0
    assert int(grown) < 1000, done.stdout
