"""Sub-agents (issue 25): the runtime that runs child sessions, and the API tools call.

The names a front end, a test or a library user needs are here; see
:mod:`ikigai_core.orchestration.supervisor` for how it works.
"""

from ikigai_core.orchestration.limits import parse_budget
from ikigai_core.orchestration.node import STATUSES, AgentInfo, AgentResult
from ikigai_core.orchestration.server import serving
from ikigai_core.orchestration.supervisor import (
    WAIT_OUTPUT_CAP,
    AgentEvent,
    Definition,
    Supervisor,
)

__all__ = ["STATUSES", "WAIT_OUTPUT_CAP", "AgentEvent", "AgentInfo", "AgentResult",
           "Definition", "Supervisor", "parse_budget", "serving"]
