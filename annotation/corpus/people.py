"""Annotator accounts made by coordinators, invitations, and assigning people to a dataset's topics.

An account is made either with an initial password (the coordinator passes it on) or with an
invitation: the account has no usable password until its owner opens the link and chooses one.
The link is Django's password-reset token (``default_token_generator``): it expires after
``PASSWORD_RESET_TIMEOUT`` and stops working once a password is set or the user logs in. Making a
new link revokes the earlier ones (the token signs the password field, and each link gets a new
unusable password): a renewed invitation is what a coordinator does when a link went astray. A new
link can be made only for an account that was invited and has never been used (no usable
password, never logged in) and is not staff: a coordinator can never take over a working account.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotation.corpus.models import Assignment, Dataset, Topic
from annotation.corpus.roles import ANNOTATOR, role_group

User = get_user_model()


class AccountError(ValueError):
    """The account cannot be made as asked; the message says why, ``field`` what to change."""

    def __init__(self, message: str, field: str = "username"):
        super().__init__(message)
        self.field = field


def is_pending_invitation(user) -> bool:
    """Invited and never used: the only accounts a new invitation link may be made for."""
    return (
        not user.has_usable_password()
        and user.last_login is None
        and user.is_active
        and not (user.is_staff or user.is_superuser)
    )


def invitation_path(user) -> str:
    """The path of a link that lets ``user`` choose their password (once, within the timeout);
    every link made before it for ``user`` stops working."""
    if not is_pending_invitation(user):
        raise AccountError(f"{user.username} has already joined: they log in with their own password.")
    user.set_unusable_password()  # a new random unusable hash: earlier tokens no longer verify
    user.save(update_fields=["password"])
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("invitation", kwargs={"uidb64": uid, "token": default_token_generator.make_token(user)})


def create_annotator(username: str, *, name: str = "", email: str = "", password: str | None = None) -> User:
    """A new annotator account; without ``password`` it waits for its invitation to be accepted.

    The password is checked by the site's password validators (AccountError with their messages)."""
    username = username.strip()
    if User.objects.filter(username__iexact=username).exists():
        raise AccountError(f"The username {username} is taken: choose another, or add the existing user below.")
    first, _, last = name.strip().partition(" ")
    user = User(username=username, first_name=first[:150], last_name=last.strip()[:150], email=email.strip())
    if password is not None:
        try:
            validate_password(password, user)
        except ValidationError as error:
            raise AccountError(" ".join(error.messages), field="password") from None
        user.set_password(password)
    else:
        user.set_unusable_password()
    try:
        with transaction.atomic():
            user.save()
            user.groups.add(role_group(ANNOTATOR))
    except IntegrityError:
        raise AccountError(f"The username {username} is taken: choose another.") from None
    return user


@dataclass(frozen=True)
class Assigned:
    created: list[Assignment]
    existing: list[Topic]


def assign(user, topics, task: str, created_by) -> Assigned:
    """Assign ``user`` to ``task`` on each topic; topics they already have that task on are reported."""
    created, existing = [], []
    with transaction.atomic():
        have = set(
            Assignment.objects.filter(annotator=user, task=task, topic__in=topics).values_list("topic_id", flat=True)
        )
        for topic in topics:
            if topic.pk in have:
                existing.append(topic)
            else:
                created.append(Assignment.objects.create(topic=topic, annotator=user, task=task, created_by=created_by))
    return Assigned(created, existing)


def people_of(dataset: Dataset) -> list[dict]:
    """Everyone assigned in the dataset: the user, their assignments per task, whether invited."""
    rows: dict[int, dict] = {}
    for a in (
        Assignment.objects.filter(topic__dataset=dataset)
        .select_related("annotator", "topic")
        .order_by("annotator__username", "topic__external_id")
    ):
        row = rows.setdefault(
            a.annotator_id,
            {
                "user": a.annotator,
                "build_pyramid": [],
                "annotate_peers": [],
                "done": 0,
                "total": 0,
                "invited": is_pending_invitation(a.annotator),
            },
        )
        row[a.task].append(a.topic.external_id)
        row["total"] += 1
        row["done"] += a.status == Assignment.Status.DONE
    return list(rows.values())
