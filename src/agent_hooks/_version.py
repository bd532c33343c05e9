"""The package's version: one home, read by the build (``pyproject.toml``), ``agent_hooks``
and ``agent-hooks --version``, without importing :mod:`importlib.metadata` at start."""

__version__ = "0.2.0"

DISTRIBUTION = "agent-hooks-injector"
"""The name on the package index (``agent-hooks`` there is another project's): what
``--version`` names, so its line says what to ``pip install``."""
