"""Starting a dataset: whoever creates one coordinates it (the pages and the API both come here)."""

from django.db import transaction

from annotation.corpus.models import Dataset


def add_creator(dataset: Dataset, user) -> Dataset:
    """Make the creator a coordinator, so the new dataset is never nobody's (superusers see every
    dataset anyway and are not added)."""
    if not user.is_superuser:
        dataset.coordinators.add(user)
    return dataset


def create_dataset(user, name: str, description: str = "") -> Dataset:
    with transaction.atomic():
        return add_creator(Dataset.objects.create(name=name.strip(), description=description.strip()), user)
