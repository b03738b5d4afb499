"""Forms of the coordinator dashboards: assignments, their filters, judgment uploads."""

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.template.defaultfilters import filesizeformat

from annotation.corpus.models import Assignment

STATUS_FILTERS = [("", "Any status"), *Assignment.Status.choices, ("unassigned", "Unassigned")]


def judgment_max_bytes() -> int:
    """Largest judgment file accepted (``JUDGMENT_MAX_BYTES``; default 5 MiB, at most IMPORT_MAX_BYTES)."""
    return getattr(settings, "JUDGMENT_MAX_BYTES", min(5 * 1024 * 1024, settings.IMPORT_MAX_BYTES))


class AssignmentForm(forms.Form):
    """Assign an annotator to a topic's task; a second annotator on the same topic is allowed
    (that is how agreement is measured), the same annotator twice is not."""

    topic = forms.ModelChoiceField(queryset=None, empty_label="Topic…")
    annotator = forms.ModelChoiceField(queryset=None, empty_label="Annotator…")
    task = forms.ChoiceField(choices=Assignment.Task.choices)

    def __init__(self, *args, dataset, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset = dataset
        self.fields["topic"].queryset = dataset.topics.order_by("external_id")
        self.fields["topic"].label_from_instance = lambda topic: topic.external_id
        self.fields["annotator"].queryset = get_user_model().objects.filter(is_active=True).order_by("username")

    def clean(self):
        data = super().clean()
        topic, annotator, task = data.get("topic"), data.get("annotator"), data.get("task")
        if (
            topic
            and annotator
            and task
            and Assignment.objects.filter(topic=topic, annotator=annotator, task=task).exists()
        ):
            label = Assignment.Task(task).label.lower()
            raise forms.ValidationError(
                f"{annotator.username} is already assigned to {label} on topic {topic.external_id}."
            )
        return data

    def save(self, created_by) -> Assignment | None:
        """The new assignment, or None (with a form error) if one was created concurrently."""
        try:
            with transaction.atomic():
                return Assignment.objects.create(
                    created_by=created_by, **{k: self.cleaned_data[k] for k in ("topic", "annotator", "task")}
                )
        except IntegrityError:
            self.add_error(None, "This assignment already exists.")
            return None


class StatusForm(forms.Form):
    status = forms.ChoiceField(choices=Assignment.Status.choices)


class AssignmentFilter(forms.Form):
    """GET filters of the overview (every field optional)."""

    task = forms.ChoiceField(
        choices=[("", "Any task"), *Assignment.Task.choices],
        required=False,
        widget=forms.Select(attrs={"aria-label": "Task"}),
    )
    status = forms.ChoiceField(
        choices=STATUS_FILTERS, required=False, widget=forms.Select(attrs={"aria-label": "Status"})
    )
    annotator = forms.ChoiceField(
        choices=[("", "Any annotator")], required=False, widget=forms.Select(attrs={"aria-label": "Annotator"})
    )

    def __init__(self, *args, annotators=(), **kwargs):
        # Its own ids: it shares the overview with the assignment form's task and annotator fields.
        kwargs.setdefault("auto_id", "id_filter_%s")
        super().__init__(*args, **kwargs)
        self.fields["annotator"].choices = [("", "Any annotator"), *((a, a) for a in annotators)]

    def values(self) -> dict:
        return self.cleaned_data if self.is_valid() else {"task": "", "status": "", "annotator": ""}


class JudgmentUploadForm(forms.Form):
    """Judgments to meta-evaluate against: a ``topic,summary,metric,value`` CSV, or a DUC score
    table with its header file (``2006_modified_scores.txt`` + ``2006-header.txt``)."""

    FORMATS = [("csv", "CSV (topic, summary, metric, value)"), ("duc", "DUC score table + header file")]

    format = forms.ChoiceField(choices=FORMATS, initial="csv", widget=forms.RadioSelect)
    file = forms.FileField(label="Judgments file")
    header = forms.FileField(label="Header file (DUC tables only)", required=False)
    linguistic = forms.BooleanField(
        label="Also import the five linguistic quality questions (DUC tables)", required=False
    )

    def _text(self, name: str, strict: bool) -> str | None:
        upload = self.cleaned_data.get(name)
        if upload is None:
            return None
        limit = judgment_max_bytes()
        if upload.size > limit:
            self.add_error(
                name, f"{upload.name} is {filesizeformat(upload.size)}; the limit is {filesizeformat(limit)}."
            )
            return None
        raw = upload.read()
        try:
            return raw.decode("utf-8-sig" if strict else "utf-8")
        except UnicodeDecodeError as error:
            if strict:
                self.add_error(name, f"{upload.name} is not UTF-8 text (byte {error.start}).")
                return None
            return raw.decode("utf-8", errors="replace")  # as annotation.dashboards.judgments reads DUC tables

    def clean(self):
        data = super().clean()
        fmt = data.get("format")
        if fmt == "duc" and not data.get("header"):
            self.add_error(
                "header", "A DUC score table needs its header file (e.g. 2006-header.txt): columns are found by name."
            )
        data["text"] = self._text("file", strict=fmt == "csv")
        data["header_text"] = self._text("header", strict=False) if fmt == "duc" else None
        return data
