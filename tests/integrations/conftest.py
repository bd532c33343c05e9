"""LiteLLM fetches its model price list from the network when imported, unless told not to: the
tests run offline, so they say so before any test module imports it."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
