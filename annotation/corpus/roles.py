"""The two roles: annotators do assigned work, coordinators run datasets (the access rule,
``annotation.access.rules``, a layer above, reads them)."""

from django.contrib.auth.models import Group

ANNOTATOR = "annotator"
COORDINATOR = "coordinator"
# Annotators named by imported DUCView files: identities that own annotations, never login
# accounts (inactive, unusable password). Not a role: they get no assignments.
IMPORTED_ANNOTATOR = "imported annotator"
IMPORTED_MARK = "(imported annotator: cannot log in)"


def role_group(name: str) -> Group:
    """The group of a role (created by migration 0002; recreated if someone deleted it)."""
    return Group.objects.get_or_create(name=name)[0]
