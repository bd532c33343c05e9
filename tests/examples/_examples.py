"""The example apps under ``examples/``, read as a host's test would read its own manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def manifest(app: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / app / "manifest.json").read_text())
    return loaded


def history(app: str) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((EXAMPLES / app / "history.json").read_text())
    return loaded
