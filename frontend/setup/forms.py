"""Forms of the set-up pages. Field names are never shown raw: every label and message is
written for the coordinator."""

from django import forms
from django.contrib.auth import get_user_model

from annotation.corpus.models import DESCRIPTION_MAX_CHARS, SUMMARY_MAX_CHARS, Assignment, Dataset, Topic
from annotation.formats.summary_texts import (
    DEFAULT_HEADER_PATTERN,
    DEFAULT_PEER_NAMES,
    DEFAULT_REFERENCE_NAMES,
    MAX_PATTERN,
)

PASTED_TEXTS_MAX_CHARS = 500_000  # one topic's references (or peers) pasted at once: a few hundred summaries
PASSWORD_MAX_CHARS = 4096  # hashing a longer one is only work for the server


class DatasetForm(forms.Form):
    name = forms.CharField(max_length=200, label="Name", help_text="For example “DUC 2006” or “News pilot, spring”.")
    description = forms.CharField(
        required=False, label="Description", max_length=DESCRIPTION_MAX_CHARS, widget=forms.Textarea(attrs={"rows": 3})
    )

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if Dataset.objects.filter(name__iexact=name).exists():
            raise forms.ValidationError(f"A dataset named “{name}” exists already: choose another name.")
        return name


class BuildingForm(forms.Form):
    """How the dataset's pyramids are built: with the builder's proposals, or unassisted."""

    assisted_building = forms.BooleanField(
        required=False,
        label="Propose contributors and SCUs in the pyramid builder",
        help_text=(
            "Off: the builder proposes nothing and the API refuses proposals, so every pyramid is the expert's "
            "unaided work (for studies of agreement between experts). Pyramids record what came from accepted "
            "proposals either way."
        ),
    )


class HeaderPatternField(forms.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=MAX_PATTERN, strip=False, **kwargs)


class TopicTextsForm(forms.Form):
    """One topic: its references and peers each pasted or uploaded as one text, split by headers."""

    topic = forms.CharField(max_length=100, label="Topic id", help_text="For example D0601.")
    title = forms.CharField(max_length=500, required=False, label="Title")
    references_text = forms.CharField(
        required=False,
        strip=False,
        label="Reference summaries",
        max_length=PASTED_TEXTS_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
    )
    references_file = forms.FileField(required=False, label="…or a file of them")
    peers_text = forms.CharField(
        required=False,
        strip=False,
        label="Peer summaries",
        max_length=PASTED_TEXTS_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
    )
    peers_file = forms.FileField(required=False, label="…or a file of them")
    header_pattern = HeaderPatternField(
        initial=DEFAULT_HEADER_PATTERN,
        label="Header pattern",
        help_text="A regular expression matching the header before each summary "
        "(as DUCView's “New pyramid”). The default matches a dashed line, "
        "the summary's name (D0601.M.250.A.A gives the id A), a dashed line.",
    )

    def clean(self):
        data = super().clean()
        for kind, label in (("references", "reference summaries"), ("peers", "peer summaries")):
            if data.get(f"{kind}_text", "").strip() and data.get(f"{kind}_file"):
                self.add_error(f"{kind}_file", f"Paste the {label} or upload a file of them, not both.")
        return data


class TopicZipForm(forms.Form):
    """Many topics: a zip of text files, one summary per file, named by patterns."""

    archive = forms.FileField(label="Zip of text files")
    reference_names = HeaderPatternField(
        initial=DEFAULT_REFERENCE_NAMES,
        required=False,
        label="Reference file names",
        help_text="A regular expression for the whole file name, with the groups "
        "(?P<topic>…) and (?P<id>…). The default reads NIST names: "
        "D0601.M.250.A.A is reference A of topic D0601.",
    )
    peer_names = HeaderPatternField(
        initial=DEFAULT_PEER_NAMES,
        required=False,
        label="Peer file names",
        help_text="The same for peers: D0601.M.250.A.12 is peer 12 of topic D0601.",
    )


class PyramidSetForm(forms.Form):
    """The topic a set of pyramids of the same texts goes into (the files are the page's ``files``)."""

    topic = forms.CharField(
        max_length=Topic._meta.get_field("external_id").max_length,
        label="Topic",
        help_text="Every pyramid of the set goes into this topic (created if needed), on the texts "
        "of the first file by name, e.g. MATTER.",
    )


class _Assign(forms.Form):
    """Topics (or all of them) and a task to assign; nothing to assign is fine."""

    all_topics = forms.BooleanField(required=False, label="All topics of the dataset")
    topics = forms.ModelMultipleChoiceField(
        queryset=None, required=False, label="Topics", widget=forms.CheckboxSelectMultiple
    )
    task = forms.ChoiceField(
        choices=Assignment.Task.choices, initial=Assignment.Task.ANNOTATE_PEERS, label="Task", widget=forms.RadioSelect
    )

    def __init__(self, *args, dataset, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset = dataset
        self.fields["topics"].queryset = dataset.topics.order_by("external_id")
        self.fields["topics"].label_from_instance = lambda topic: topic.external_id

    def chosen_topics(self) -> list:
        if self.cleaned_data.get("all_topics"):
            return list(self.dataset.topics.order_by("external_id"))
        return list(self.cleaned_data.get("topics") or [])


class AccountForm(_Assign):
    """A new annotator account, with an initial password or an invitation link."""

    ACCESS = [
        ("invite", "Make an invitation link (they choose their password)"),
        ("password", "Set an initial password"),
    ]

    username = forms.RegexField(
        regex=r"^[\w.@+-]+\Z",
        max_length=150,
        label="Username",
        error_messages={"invalid": "Use letters, digits and . @ + - _ only."},
    )
    name = forms.CharField(max_length=300, required=False, label="Full name")
    email = forms.EmailField(required=False, label="Email")
    access = forms.ChoiceField(choices=ACCESS, initial="invite", widget=forms.RadioSelect, label="How they log in")
    password = forms.CharField(
        required=False,
        strip=False,
        label="Initial password",
        max_length=PASSWORD_MAX_CHARS,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    field_order = ["username", "name", "email", "access", "password", "all_topics", "topics", "task"]

    def clean(self):
        data = super().clean()
        if data.get("access") == "password" and not data.get("password"):
            self.add_error("password", "Type the initial password, or choose an invitation link instead.")
        return data


class ExistingUserForm(_Assign):
    """Someone who already has an account, added to this dataset's topics."""

    username = forms.CharField(max_length=150, label="Username")

    field_order = ["username", "all_topics", "topics", "task"]

    def clean_username(self):
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username__iexact=username, is_active=True).first()
        if user is None:
            raise forms.ValidationError(f"Nobody has the username {username}: create an account for them above.")
        self.user = user
        return username

    def clean(self):
        data = super().clean()
        if not self.errors and not self.chosen_topics():
            self.add_error("topics", "Choose the topics to assign them to (or all topics).")
        return data


class TopicRenameForm(forms.Form):
    """A topic's id and title (the rules, a unique id among others: ``corpus.topic_editing``)."""

    external_id = forms.CharField(
        max_length=100, label="Topic id", help_text="Unique within the dataset, for example D0601."
    )
    title = forms.CharField(max_length=500, required=False, label="Title")


class SummaryAddForm(forms.Form):
    """One more reference or peer of the topic, pasted."""

    KINDS = [("reference", "Reference summary"), ("peer", "Peer summary")]

    kind = forms.ChoiceField(choices=KINDS, initial="peer", widget=forms.RadioSelect, label="Kind")
    external_id = forms.CharField(
        max_length=100, label="Id", help_text="For example A for a reference, 12 for a system's peer."
    )
    text = forms.CharField(
        strip=False,
        label="Text",
        max_length=SUMMARY_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
    )


class SummaryTextForm(forms.Form):
    """The corrected text of a summary nothing rests on."""

    text = forms.CharField(
        strip=False,
        label="Text",
        max_length=SUMMARY_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}),
    )


class TopicDeleteForm(forms.Form):
    """Typing the topic's id confirms a delete; ``shown`` carries back the counts that were shown."""

    confirm = forms.CharField(
        max_length=200,
        required=False,
        label="Type the topic id to confirm",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false", "autocapitalize": "off"}),
    )
    shown = forms.CharField(max_length=500, required=False, widget=forms.HiddenInput)
