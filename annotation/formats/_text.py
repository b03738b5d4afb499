"""Small text helpers shared by the DUCView reader and writer."""

from __future__ import annotations

import bisect
import re

__all__ = ["Utf16Offsets", "derived_label", "short"]

_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")


def short(s: str, n: int = 60) -> str:
    """repr() of s, cut to about n characters, for messages."""
    return repr(s if len(s) <= n else s[: n - 3] + "...")


def derived_label(texts_in_order: list[str]) -> str:
    """A contributor label as DUCView makes it: its parts' texts in text order joined by '...'."""
    return "...".join(texts_in_order)


class Utf16Offsets:
    """Converts between Java UTF-16 offsets (stored in the files) and code point offsets."""

    def __init__(self, text: str):
        self.astral = [i for i, c in enumerate(text) if ord(c) > 0xFFFF] if _ASTRAL_RE.search(text) else []
        self.u16_len = len(text) + len(self.astral)

    def to_cp(self, u16: int) -> int:
        if not self.astral:
            return u16
        # code point i starts at UTF-16 index i + (number of astral chars before i)
        lo, hi = 0, u16
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if mid + bisect.bisect_left(self.astral, mid) <= u16:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def to_u16(self, cp: int) -> int:
        return cp + bisect.bisect_left(self.astral, cp) if self.astral else cp
