"""Every free text is bounded, on every path that takes one (docs/configuration.md, "Bounds of free
texts"): a dataset description or a crowd run's guidance once took 1,000,000 characters.

Found programmatically, so a new field is covered without editing this file:
- every text field of the app's models (a TextField's ``max_length`` alone is a widget hint, so
  the bound must be a validator ``full_clean``, model forms and serializers run);
- every character field of every form of the pages, and of every serializer of the API that takes
  input: a value one character over its bound is refused.
Then the issue's two examples end to end, through the page and the API each.
"""

import inspect
from importlib import import_module

import pytest
from django import forms
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.db import models
from django.test import Client
from django.urls import reverse
from rest_framework import serializers
from rest_framework.test import APIClient

from annotation.corpus.models import DESCRIPTION_MAX_CHARS, Dataset
from annotation.corpus.roles import COORDINATOR, role_group
from annotation.lightweight.models import GUIDANCE_MAX_CHARS, LightweightPyramid
from annotation.pyramids.models import LengthBound
from frontend.lightweight.forms import RunSettingsForm

NOT_INPUT = {("datasetdashboard", "payload")}  # figures the app computes and stores: nobody types them
FORM_MODULES = ("frontend.setup.forms", "frontend.dashboards.forms", "frontend.lightweight.forms")
SERIALIZER_MODULES = (
    "annotation.api.serializers",
    "annotation.corpus.serializers",
    "annotation.pyramids.serializers",
    "annotation.peers.serializers",
    "annotation.history.serializers",
    "annotation.lightweight.api",
    "annotation.transfer.api",
    "annotation.pyramids.api",
)
# Describe answers; never read a request (the builder's proposals are accepted through the bounded
# SCU and contributor serializers).
RESPONSES_ONLY = {
    "FileOutcomeSerializer",
    "ImportReportSerializer",
    "ContributorProposalSerializer",
    "ProposedContributorSerializer",
    "SCUProposalSerializer",
}


def bound_of(validators) -> int | None:
    for validator in validators:
        if isinstance(validator, MaxLengthValidator):
            return validator.limit_value
        if isinstance(validator, LengthBound):
            return getattr(settings, validator.setting)
    return None


def text_fields():
    for model in apps.get_app_config("annotation").get_models():
        for field in model._meta.get_fields():
            texts = isinstance(field, (models.TextField, models.CharField))
            if texts and (model._meta.model_name, field.name) not in NOT_INPUT:
                yield model, field


def test_every_text_field_of_the_models_is_bounded():
    unbounded, unchecked = [], []
    for model, field in text_fields():
        bound = bound_of(field.validators)
        if bound is None:
            unbounded.append(f"{model.__name__}.{field.name}")
            continue
        try:
            field.run_validators("x" * (bound + 1))
        except ValidationError:
            continue
        unchecked.append(f"{model.__name__}.{field.name}")
    assert unbounded == [] and unchecked == [], (unbounded, unchecked)


def classes_in(module_names, base):
    for name in module_names:
        module = import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, base) and cls.__module__ == module.__name__ and not inspect.isabstract(cls):
                yield cls


def form_of(cls, dataset):
    """An instance of any form of the pages, given what its constructor asks for."""
    for kwargs in ({}, {"dataset": dataset}, {"datasets": Dataset.objects.all()}, {"count": 2}):
        try:
            return lambda data, kwargs=kwargs: cls(data, **kwargs), cls(**kwargs)
        except TypeError:
            continue
    raise AssertionError(f"cannot make a {cls.__name__}")


@pytest.mark.django_db
def test_every_text_field_of_every_form_refuses_an_over_long_value():
    dataset = Dataset.objects.create(name="D")
    checked, unbounded = [], []
    for cls in classes_in(FORM_MODULES, forms.BaseForm):
        make, blank = form_of(cls, dataset)
        for name, field in blank.fields.items():
            if not isinstance(field, forms.CharField):
                continue
            if field.max_length is None:
                unbounded.append(f"{cls.__name__}.{name}")
                continue
            form = make({name: "x" * (field.max_length + 1)})
            form.is_valid()
            refused = form.errors.get(name, [])
            assert any("at most" in e for e in refused), (cls.__name__, name, refused)
            checked.append(f"{cls.__name__}.{name}")
    assert unbounded == [], unbounded
    for expected in (
        "DatasetForm.description",
        "TopicTextsForm.references_text",
        "SummaryAddForm.text",
        "SummaryTextForm.text",
        "RunSettingsForm.guidance",
        "AccountForm.password",
    ):
        assert expected in checked, checked


def char_fields(serializer, prefix=""):
    for name, field in serializer.fields.items():
        if field.read_only:
            continue
        if isinstance(field, (serializers.ListField, serializers.ListSerializer)):
            field = field.child
        if isinstance(field, serializers.BaseSerializer):
            yield from char_fields(field, f"{prefix}{name}.")
        elif isinstance(field, serializers.CharField):
            yield f"{prefix}{name}", field


@pytest.mark.django_db
def test_every_text_field_of_every_serializer_refuses_an_over_long_value():
    checked, unbounded = [], []
    for cls in classes_in(SERIALIZER_MODULES, serializers.BaseSerializer):
        if cls.__name__ in RESPONSES_ONLY or getattr(getattr(cls, "Meta", None), "abstract", False):
            continue
        try:
            serializer = cls(context={})
            fields = list(char_fields(serializer))
        except AssertionError:
            continue  # a base class without Meta (StrictModelSerializer), not a serializer of its own
        for name, field in fields:
            bound = field.max_length or bound_of(field.validators)
            if bound is None:
                unbounded.append(f"{cls.__name__}.{name}")
                continue
            with pytest.raises(serializers.ValidationError):
                field.run_validation("x" * (bound + 1))
            checked.append(f"{cls.__name__}.{name}")
    assert unbounded == [], unbounded
    for expected in (
        "DatasetSerializer.description",
        "TopicSerializer.narrative",
        "ReferenceSummarySerializer.text",
        "LightweightPyramidSerializer.guidance",
        "SCUSerializer.label",
        "SplitInput.label",
    ):
        assert expected in checked, checked


@pytest.fixture
def coordinator(db):
    user = User.objects.create_user("coord")
    user.groups.add(role_group(COORDINATOR))
    return user


def test_a_dataset_description_is_bounded_on_the_page_and_the_api(coordinator):
    page = Client()
    page.force_login(coordinator)
    too_long = "d" * (DESCRIPTION_MAX_CHARS + 1)
    assert page.post(reverse("setup:dataset_new"), {"name": "Long", "description": too_long}).status_code == 400
    api = APIClient()
    api.force_authenticate(coordinator)
    answer = api.post(reverse("api:dataset-list"), {"name": "Long", "description": too_long}, format="json")
    assert answer.status_code == 400 and "description" in answer.json()
    assert not Dataset.objects.filter(name="Long").exists()
    at_bound = api.post(reverse("api:dataset-list"), {"name": "Long", "description": too_long[1:]}, format="json")
    assert at_bound.status_code == 201
    detail = reverse("api:dataset-detail", args=[at_bound.json()["id"]])
    answer = api.patch(detail, {"description": too_long}, format="json")
    assert answer.status_code == 400 and len(Dataset.objects.get(name="Long").description) == DESCRIPTION_MAX_CHARS


def test_a_runs_guidance_is_bounded_on_the_page_and_the_api(coordinator):
    dataset = Dataset.objects.create(name="D")
    dataset.coordinators.add(coordinator)
    run = LightweightPyramid.objects.create(dataset=dataset, name="run")
    too_long = "g" * (GUIDANCE_MAX_CHARS + 1)
    api = APIClient()
    api.force_authenticate(coordinator)
    answer = api.patch(reverse("api:lightweight-detail", args=[run.pk]), {"guidance": too_long}, format="json")
    assert answer.status_code == 400 and "guidance" in answer.json()
    page = Client()
    page.force_login(coordinator)
    shown = RunSettingsForm(instance=run)  # the settings as the page shows them, sent back with a new guidance
    data = {name: shown[name].value() for name in shown.fields}
    data = {name: value for name, value in data.items() if value is not None and value is not False}
    refused = page.post(reverse("lightweight:settings", args=[run.pk]), {**data, "guidance": too_long})
    run.refresh_from_db()
    assert run.guidance == "" and "at most" in refused.content.decode()
    # at the bound: saved
    saved = page.post(reverse("lightweight:settings", args=[run.pk]), {**data, "guidance": too_long[1:]})
    assert saved.status_code == 302, saved.context["settings_form"].errors
    run.refresh_from_db()
    assert run.guidance == too_long[1:]
    short = api.patch(reverse("api:lightweight-detail", args=[run.pk]), {"guidance": "g" * 10}, format="json")
    assert short.status_code == 200
