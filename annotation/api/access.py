"""The access rule as the API's base classes apply it, handed down by ``annotation.access``.

The base classes (``viewsets.ScopedViewSet``, the strict serializers) and the corpus's REST code
sit below the access rule, which knows every concept's models: ``annotation.access.rules``
registers its functions here as it is imported (``AnnotationConfig.ready`` imports it), so they
reach the rule without importing upwards. Until it is registered every check raises: no rule is
no access, never an unchecked request.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured
from rest_framework import permissions


@dataclass(frozen=True)
class Rule:
    """The functions of ``annotation.access.rules`` the REST code below it calls (see their docstrings)."""

    visible: Callable  # (user, queryset) -> the objects of it the user may see
    visible_composed: Callable  # (user, model, compose) -> compose(the model's objects the user may see), kept
    can_change: Callable  # (user, obj) -> may the user change it
    check_create: Callable  # (user, model, validated data): PermissionDenied unless the user may create it
    check_destroy: Callable  # (user, obj): PermissionDenied unless the user may delete it
    governs: Callable  # (model) -> whether the rule scopes this model's objects
    coordinator_candidates: Callable  # (dataset or None) -> who may be named the dataset's coordinators


_rule: Rule | None = None


def register(rule: Rule) -> None:
    global _rule
    _rule = rule


def rule() -> Rule:
    if _rule is None:
        raise ImproperlyConfigured(
            "No access rule is registered: annotation.access.rules registers it when imported "
            "(AnnotationConfig.ready imports it)."
        )
    return _rule


def visible(user, queryset):
    return rule().visible(user, queryset)


def visible_composed(user, model, compose):
    return rule().visible_composed(user, model, compose)


def can_change(user, obj) -> bool:
    return rule().can_change(user, obj)


def check_create(user, model, data: dict) -> None:
    rule().check_create(user, model, data)


def governs(model) -> bool:
    return rule().governs(model)


def coordinator_candidates(dataset=None):
    return rule().coordinator_candidates(dataset)


class CanChange(permissions.IsAuthenticated):
    """Reads of visible objects are allowed (querysets are already filtered); writes need ``can_change``."""

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        if not can_change(request.user, obj):
            return False
        if request.method == "DELETE":
            rule().check_destroy(request.user, obj)
        return True
