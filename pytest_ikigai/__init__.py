"""pytest-ikigai: test ikigai tools and whole agent runs offline.

Fixtures (``pytest_ikigai.plugin``, loaded through the ``pytest11`` entry point):
``ikigai_tool``, ``assert_portable``, ``fake_model``, ``ikigai_home``, ``ikigai_approve_all``
and ``ikigai_sandbox``. The fake server (``pytest_ikigai.fakeserver``), the providers'
reply shapes (``pytest_ikigai.replies``, the Responses wire's in ``pytest_ikigai.responses``)
and what the real APIs refuse (``pytest_ikigai.api_rules``) are importable for tests of
their own.
"""

__version__ = "0.1.0"
