from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0016_pyramid_adjudication'),
    ]

    operations = [
        migrations.AddField(
            model_name='pyramidadjudication',
            name='source_order',
            field=models.JSONField(blank=True, default=list, help_text=(
                '[pyramid A, pyramid B]: the sides the item keys name '
                '(which annotator SCU became which adjudicated SCU).')),
        ),
    ]
