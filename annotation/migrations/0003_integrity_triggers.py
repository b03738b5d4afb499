"""Install the integrity triggers (defined in ``_integrity``)."""
from django.db import migrations

from ._integrity import create, drop


class Migration(migrations.Migration):
    dependencies = [("annotation", "0002_roles")]
    operations = [migrations.RunPython(create, drop)]
