"""Signing keys for synthetic call ids, read from the environment (SPEC section 9).

Keys are deployment secrets, not manifest content, so they come from the environment only:
``AGENT_HOOKS_SIGNING_KEY`` for one key, or ``AGENT_HOOKS_SIGNING_KEYS`` (comma-separated) to
rotate: the first key signs, every key verifies. When both are set, ``_KEYS`` wins.
"""

from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["SigningSettings"]


class SigningSettings(BaseSettings):
    """The signing keys this process uses; build a new one each time an app is created."""

    model_config = SettingsConfigDict(env_prefix="AGENT_HOOKS_", extra="ignore")

    signing_key: SecretStr | None = None
    """``AGENT_HOOKS_SIGNING_KEY``: one key that signs and verifies."""

    signing_keys: SecretStr | None = None
    """``AGENT_HOOKS_SIGNING_KEYS``: comma-separated keys; the first signs, all verify."""

    def keys(self) -> tuple[str, ...]:
        """The keys in order (signing key first); empty when none is set. Blank parts are
        ignored and surrounding whitespace is stripped (a key mounted from a file ends in a
        newline); a ``_KEYS`` with no key in it does not switch off ``_KEY``."""
        rotation = self.signing_keys.get_secret_value() if self.signing_keys else ""
        single = self.signing_key.get_secret_value() if self.signing_key else ""
        keys = tuple(key.strip() for key in rotation.split(",") if key.strip())
        return keys or ((single.strip(),) if single.strip() else ())
