"""One answer to an unknown choice in a query string (``table=``, ``convention=``, ``level=``), for
the pages, their downloads and the REST API alike: 400, naming the choices. A silent default answers
a question that was not asked (a misspelt ``table=`` gave another table's CSV with 200), and a 404
says the dataset is missing when only a word is wrong."""

from collections.abc import Iterable, Mapping

from django.core.exceptions import BadRequest
from rest_framework import exceptions
from rest_framework.views import exception_handler as drf_exception_handler


class UnknownChoice(BadRequest):
    """A query parameter outside its choices; its message is safe to show (it repeats the query)."""

    def __init__(self, name: str, value: str, choices: Iterable[str]):
        self.name, self.choices = name, list(choices)
        super().__init__(f"Unknown {name} {value!r}: choose one of {', '.join(self.choices)}.")


def choose(params: Mapping, name: str, choices: Iterable[str], default: str) -> str:
    """``params[name]`` (``default`` when absent), which must be one of ``choices``."""
    choices = list(choices)
    value = params.get(name, default)
    if value not in choices:
        raise UnknownChoice(name, value, choices)
    return value


def exception_handler(exc, context):
    """DRF's handler, with :class:`UnknownChoice` answered as a field error: 400 ``{name: [message]}``."""
    if isinstance(exc, UnknownChoice):
        exc = exceptions.ValidationError({exc.name: [str(exc)]})
    return drf_exception_handler(exc, context)
