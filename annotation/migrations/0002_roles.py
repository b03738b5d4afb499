"""The two roles every installation has: annotators and coordinators."""
from django.db import migrations

ROLES = ("annotator", "coordinator")  # annotation.access.roles; frozen here as migrations must be


def create_roles(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLES:
        Group.objects.get_or_create(name=name)


def delete_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [("annotation", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]
    operations = [migrations.RunPython(create_roles, delete_roles)]
