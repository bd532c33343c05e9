"""The frameworks change process-wide state when imported; the rest of the suite must not see it.

- LiteLLM fetches its model price list from the network unless told not to: the tests run
  offline, so they say so before any test module imports it.
- Importing LiteLLM sets the ``httpx`` logger to WARNING and gives it a redacting filter of its
  own, and DIAL's SDK gives ``uvicorn`` a stderr handler of its own that does not propagate.
  The test modules here import the frameworks when collected, before any test of the suite runs,
  so the loggers are put back as they were once collection is done, and again after each test.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest

from tests.integrations._logging import capture, restore

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


TOUCHED_BY_FRAMEWORKS = ("httpx", "uvicorn")
"""Loggers a framework is known to reconfigure on import; made here, before any framework is
imported, so the snapshot holds them as they were."""

for _name in TOUCHED_BY_FRAMEWORKS:
    logging.getLogger(_name)
_BEFORE_COLLECTION = capture()


def pytest_collection_finish(session: pytest.Session) -> None:
    restore(_BEFORE_COLLECTION)


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    saved = capture()
    yield
    restore(saved)
