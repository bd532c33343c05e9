"""Snapshots of the process's logging configuration, to undo what a framework did to it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LoggerState:
    level: int
    propagate: bool
    disabled: bool
    handlers: tuple[logging.Handler, ...]
    filters: tuple[Any, ...]  # logging.Filter objects or callables


def loggers() -> dict[str, logging.Logger]:
    found = {
        name: logger
        for name, logger in logging.root.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)
    }
    return found  # not the root: pytest's own capture handlers come and go there


def capture() -> dict[str, LoggerState]:
    return {
        name: LoggerState(
            logger.level,
            logger.propagate,
            logger.disabled,
            tuple(logger.handlers),
            tuple(logger.filters),
        )
        for name, logger in loggers().items()
    }


def restore(saved: dict[str, LoggerState]) -> None:
    """Every logger of ``saved`` as it was (loggers made since are the libraries' own business)."""
    for name, logger in loggers().items():
        state = saved.get(name)
        if state is None:
            continue
        logger.setLevel(state.level)
        logger.propagate = state.propagate
        logger.disabled = state.disabled
        logger.handlers[:] = state.handlers
        logger.filters[:] = state.filters
