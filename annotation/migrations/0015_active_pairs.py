import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0014_adaptive_collection"),
    ]

    operations = [
        migrations.AddField(
            model_name="preferencesettings",
            name="active_pairs",
            field=models.BooleanField(
                default=False,
                help_text="Adaptive collection: make each rater's session when they start "
                "it, its pairs those of most expected information under the Thurstone "
                "scale with ties (docs/admins.md, 'Active pair choice'), instead of the "
                "balanced split.",
            ),
        ),
        migrations.AddField(
            model_name="preferencesettings",
            name="pair_repeat_limit",
            field=models.PositiveIntegerField(
                default=25,
                help_text="Active pairs: the most times one rater is shown one condition "
                "pair for one question, over the whole study (each time another content).",
                validators=[django.core.validators.MinValueValidator(1)],
            ),
        ),
    ]
