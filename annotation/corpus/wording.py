"""Counted nouns for messages and pages ("1 topic", "3 reference summaries"): one definition for
the services that word what they did and the views that show it."""


def count_noun(count: int, one: str, many: str | None = None) -> str:
    """``count`` and the noun in the number it needs (``many`` defaults to ``one`` + "s")."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def verb(count: int, one: str, many: str) -> str:
    """The verb as ``count`` subjects need it ("1 contributor points", "2 contributors point")."""
    return one if count == 1 else many
