"""Shared paths and helpers of the DUCView format tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = Path(__file__).resolve().parents[2]
REAL_DATA = REPO.parent / "shared" / "data"


def fixture_bytes(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def without_regex(obj):
    """The object with header_regex set to None (pyramid or peer annotation file)."""
    if hasattr(obj, "pyramid"):
        return dataclasses.replace(obj, pyramid=dataclasses.replace(obj.pyramid, header_regex=None))
    return dataclasses.replace(obj, header_regex=None)
