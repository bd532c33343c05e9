"""Layers import only downward, and the pure core does no I/O (STYLE 1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Lower rank = lower layer: the base, the manifest, the tool contract, the pure decision core,
# then every piece of tool I/O (toolsets), the runtime, the app, and the shells (serve, cli).
LAYERS: list[tuple[str, int]] = [
    ("agent_hooks.errors", 0),
    ("agent_hooks._scrub", 0),
    ("agent_hooks._reasons", 0),
    ("agent_hooks.messages", 0),
    ("agent_hooks.clock", 0),
    ("agent_hooks._toolnames", 0),
    ("agent_hooks._lazy", 0),
    ("agent_hooks._log_filters", 0),
    ("agent_hooks._json_writer", 0),
    ("agent_hooks.config", 1),
    ("agent_hooks.tools", 2),
    ("agent_hooks.injection", 3),
    ("agent_hooks.toolsets", 4),
    ("agent_hooks._preview_module", 5),
    ("agent_hooks.runtime", 5),
    ("agent_hooks._config_driven_hooks", 5),
    ("agent_hooks.agent_hooks_module", 5),
    ("agent_hooks.state", 5),
    ("agent_hooks.app_factory", 6),
    ("agent_hooks.testing", 6),
    ("agent_hooks.serve", 7),
    ("agent_hooks.cli", 7),
    ("agent_hooks.integrations", 7),
    ("agent_hooks.__main__", 7),
    ("agent_hooks", 6),
]

IO_MODULES = {"httpx", "httpx2", "mcp", "anyio", "asyncio", "subprocess", "socket", "sqlite3"}
PURE_PREFIXES = ("agent_hooks.config", "agent_hooks.injection", "agent_hooks.messages")


def rank(module: str) -> int:
    for prefix, value in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return value
    raise AssertionError(f"{module} belongs to no layer; add it to LAYERS")


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted((SRC / "agent_hooks").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.append((".".join(parts), path))
    return found


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, under ``if TYPE_CHECKING:`` and inside functions too: a
    type-only or deferred import still ties the lower layer to the upper one."""
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize(("module", "path"), modules(), ids=[m for m, _ in modules()])
def test_modules_import_only_their_own_layer_or_below(module: str, path: Path) -> None:
    own = rank(module)
    upward = {
        name for name in imports_of(path) if name.startswith("agent_hooks") and rank(name) > own
    }
    assert not upward, f"{module} (layer {own}) imports upward: {sorted(upward)}"


@pytest.mark.parametrize(
    ("module", "path"),
    [(m, p) for m, p in modules() if m.startswith(PURE_PREFIXES)],
    ids=[m for m, _ in modules() if m.startswith(PURE_PREFIXES)],
)
def test_the_pure_core_imports_no_io_library(module: str, path: Path) -> None:
    io = {name for name in imports_of(path) if name.split(".")[0] in IO_MODULES}
    assert not io, f"{module} imports I/O: {sorted(io)}"
