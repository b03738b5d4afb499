"""How the pages print p-values: never "0.0000" (a permutation p-value is never 0, and exact ones
over 2^20 patterns go down to 2e-6), so values below the printed precision read "< 0.0001"."""

from django import template
from django.template.defaultfilters import floatformat

from scoring import correlation

register = template.Library()
SMALLEST = 0.0001


@register.filter
def p_value(value, name: str = "") -> str:
    """``0.0123`` or ``< 0.0001`` (``p = 0.0123`` / ``p < 0.0001`` with a name); "—" when untested."""
    if value is None:
        return f"{name} —" if name else "—"
    shown = f"< {SMALLEST}" if value < SMALLEST else floatformat(value, 4)
    if not name:
        return shown
    return f"{name} {shown}" if value < SMALLEST else f"{name} = {shown}"


@register.filter
def above_noise(difference) -> bool:
    """Whether a score difference or a mean absolute difference exceeds the method's noise
    (``scoring.correlation.above_noise``: the same rule as the stored and downloaded flags)."""
    return correlation.above_noise(difference)
