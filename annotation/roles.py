"""The two roles: annotators do assigned work, coordinators run datasets."""
from django.contrib.auth.models import Group

ANNOTATOR = "annotator"
COORDINATOR = "coordinator"


def role_group(name: str) -> Group:
    """The group of a role (created by migration 0002; recreated if someone deleted it)."""
    return Group.objects.get_or_create(name=name)[0]
