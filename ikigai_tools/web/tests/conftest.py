"""Fixtures for ikigai-tools-web: a local web site on 127.0.0.1."""

from __future__ import annotations

import pytest

from .site import Site


@pytest.fixture
def site():
    """A :class:`Site` for one test."""
    with Site() as server:
        yield server
