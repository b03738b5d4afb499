"""Shared paths and helpers of the DUCView format tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.conftest import SHARED_DATA

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REAL_DATA = SHARED_DATA  # ../shared/data, or where SHARED_DATA points (a worktree elsewhere)


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def without_regex(obj):
    """The object with header_regex set to None (pyramid or peer annotation file)."""
    if hasattr(obj, "pyramid"):
        return dataclasses.replace(obj, pyramid=dataclasses.replace(obj.pyramid, header_regex=None))
    return dataclasses.replace(obj, header_regex=None)
