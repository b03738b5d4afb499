"""Forms of the lightweight-pyramid pages (coordinator settings, crowd work)."""

from django import forms

from annotation.lightweight.importing import MAX_FILE_BYTES as MAX_UPLOAD_BYTES
from annotation.lightweight.models import LightweightPyramid
from annotation.lightweight.work import MAX_STATEMENT_CHARS, MAX_WORKER_ID


class RunCreateForm(forms.ModelForm):
    class Meta:
        model = LightweightPyramid
        fields = ["dataset", "name", "origin"]
        labels = {"origin": "Statements come from"}

    def __init__(self, *args, datasets=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = datasets
        self.fields["dataset"].empty_label = None


class RunSettingsForm(forms.ModelForm):
    class Meta:
        model = LightweightPyramid
        fields = [
            "guidance",
            "statements_per_writer",
            "writers_per_reference",
            "statements_per_reference",
            "judges_per_task",
            "seed",
            "agreement",
            "threshold",
            "blank",
            "topic_filter",
            "pay_writing",
            "pay_judging",
            "prolific_code",
            "verified_only",
        ]
        labels = {
            "agreement": "Worker agreement",
            "threshold": "Remove workers below",
            "blank": "Blank answers count as",
            "topic_filter": "Leave out the topics with the lowest crowd agreement (%)",
            "pay_writing": "Pay per statement-writing assignment ($)",
            "pay_judging": "Pay per judging assignment ($)",
            "prolific_code": "Prolific completion code",
            "verified_only": "Count only verified answers",
        }
        widgets = {"guidance": forms.Textarea(attrs={"rows": 3})}
        help_texts = {
            "pay_writing": "",
            "pay_judging": "",
            "topic_filter": "Krippendorff's alpha per task, averaged per topic.",
        }

    def clean_statements_per_writer(self):
        value = self.cleaned_data["statements_per_writer"]
        if not 1 <= value <= 16:
            raise forms.ValidationError("Between 1 and 16 statements per writer.")
        return value


class UploadForm(forms.Form):
    file = forms.FileField(label="Results, statement list or Phase-1 results (CSV)")


MAX_PASTED_PAIRS_CHARS = 2_000_000


class CodeCheckForm(forms.Form):
    """The platform's submissions, as a file (MTurk's batch results, Prolific's export) or pasted."""

    def __init__(self, *args, **kwargs):
        # Its own ids: it shares the run page with the upload form, whose file field is ``id_file`` too.
        kwargs.setdefault("auto_id", "id_codes_%s")
        super().__init__(*args, **kwargs)

    file = forms.FileField(label="Submissions file (CSV)", required=False)
    pairs = forms.CharField(
        label="or paste worker id and completion code, one pair a line",
        required=False,
        max_length=MAX_PASTED_PAIRS_CHARS,
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
    )

    def text(self) -> str:
        """The list's text (a file first); ``ValidationError`` when neither or unreadable."""
        upload = self.cleaned_data.get("file")
        if upload is not None:
            if upload.size > MAX_UPLOAD_BYTES:
                raise forms.ValidationError(f"The file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MiB.")
            try:
                return upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError(f"{upload.name} is not UTF-8 text.") from None
        if self.cleaned_data.get("pairs", "").strip():
            return self.cleaned_data["pairs"]
        raise forms.ValidationError("Choose the platform's submissions file or paste the pairs.")


class ConfirmForm(forms.Form):
    confirm = forms.BooleanField(required=True)


class WorkerForm(forms.Form):
    worker = forms.CharField(
        label="Your worker id",
        max_length=MAX_WORKER_ID,
        widget=forms.TextInput(attrs={"autocomplete": "off", "autofocus": True}),
    )


class WritingForm(forms.Form):
    """One text field per statement, all required."""

    def __init__(self, *args, count: int, **kwargs):
        super().__init__(*args, **kwargs)
        for k in range(1, count + 1):
            self.fields[f"s{k}"] = forms.CharField(
                label=f"Statement {k}",
                max_length=MAX_STATEMENT_CHARS,
                error_messages={"required": f"Please write statement {k}."},
                widget=forms.TextInput(attrs={"autocomplete": "off"}),
            )

    def texts(self) -> list[str]:
        return [self.cleaned_data[name] for name in self.fields]
