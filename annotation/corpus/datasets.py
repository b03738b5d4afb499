"""Starting a dataset: whoever creates one coordinates it (the pages and the API both come here)."""

from django.db import transaction

from annotation.corpus.models import Dataset


def add_creator(dataset: Dataset, user) -> Dataset:
    """Make the creator a coordinator, so the new dataset is never nobody's (superusers see every
    dataset anyway and are not added)."""
    if not user.is_superuser:
        dataset.coordinators.add(user)
    return dataset


def set_assisted_building(dataset: Dataset, assisted: bool) -> Dataset:
    """Turn the pyramid builder's proposals on or off for the dataset's pyramids (those built from
    now on; what was accepted before stays recorded as proposed)."""
    dataset.assisted_building = assisted
    dataset.save(update_fields=["assisted_building"])
    return dataset


def create_dataset(user, name: str, description: str = "") -> Dataset:
    with transaction.atomic():
        return add_creator(Dataset.objects.create(name=name.strip(), description=description.strip()), user)
