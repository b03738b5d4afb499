"""Every operation of the OpenAPI description says what its own resource is: a viewset without a
docstring of its own showed its mixin's (``annotations_list`` read "Undo/redo of the user's own
changes", the topics "A version for metadata objects")."""

import pytest
from django.urls import get_resolver
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db


def views():
    def walk(patterns):
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                yield from walk(pattern.url_patterns)
            else:
                yield pattern

    return {
        pattern.callback.cls
        for pattern in walk(get_resolver().url_patterns)
        if getattr(pattern.callback, "cls", None) and pattern.callback.cls.__module__.startswith("annotation.")
    }


def test_every_api_view_describes_itself():
    found = views()
    assert len(found) >= 10
    missing = sorted(cls.__name__ for cls in found if not (cls.__dict__.get("__doc__") or "").strip())
    assert missing == []


def test_no_operation_borrows_a_mixins_description():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = {
        op["operationId"]: op.get("description", "") for methods in schema["paths"].values() for op in methods.values()
    }
    assert operations["annotations_list"].startswith("Peer annotations:")
    borrowed = {}
    for view in views():
        for base in view.__mro__[1:]:
            doc = (base.__dict__.get("__doc__") or "").strip()
            if doc and base.__module__.startswith("annotation."):
                borrowed.update(
                    {
                        name: base.__name__
                        for name, text in operations.items()
                        if text.strip() == doc.split("\n\n")[0].strip() or text.strip() == doc
                    }
                )
    assert borrowed == {}
