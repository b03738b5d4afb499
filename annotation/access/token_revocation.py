"""A password change revokes the user's API token.

Whoever knew the old password may have taken a token with it; a new password must lock them out
of the API as Django's session hash already logs out the user's other browser sessions. A token is
revoked whenever the stored password hash changes (``set_password``, ``set_unusable_password``,
the admin's and ``changepassword``'s forms), except when Django re-hashes the *same* password with
a newer hasher at login (``check_password`` saves only the password field, without a new one).
"""

from django.conf import settings
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from rest_framework.authtoken.models import Token

from annotation.jobs import framework_internals


def _rehash_only(instance, update_fields) -> bool:
    return (
        not framework_internals.password_being_set(instance)
        and update_fields is not None
        and set(update_fields) == {"password"}
    )


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="token_revocation.remember")
def _remember_stored_hash(sender, instance, raw=False, update_fields=None, **kwargs):
    if raw or instance.pk is None or _rehash_only(instance, update_fields):
        return
    instance._token_revocation_stored_hash = (
        sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    )


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="token_revocation.revoke")
def _revoke_on_password_change(sender, instance, created, raw=False, **kwargs):
    stored = instance.__dict__.pop("_token_revocation_stored_hash", None)
    if not created and stored is not None and stored != instance.password:
        Token.objects.filter(user=instance).delete()
