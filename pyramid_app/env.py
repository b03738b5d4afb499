"""Typed reads of environment variables, the only source of settings.

Kept separate from settings.py so that the parsing rules (what counts as true, how lists are
split) are tested on their own and documented in one place.
"""

import os

TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off", ""}


class ConfigurationError(RuntimeError):
    """A setting is missing or malformed; the message names the variable."""


def get_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ConfigurationError(f"{name}={raw!r} is not a boolean (use one of 1/0, true/false, yes/no, on/off)")


def get_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def get_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigurationError(f"{name}={raw!r} is not an integer") from None


def get_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip() or default
