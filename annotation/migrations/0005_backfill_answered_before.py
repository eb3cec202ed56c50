"""Rest breaks count a rater's answers across sessions (0003 added the count): sessions
open when that change is deployed get the answers of the rater's earlier sessions."""

from django.db import migrations
from django.db.models import OuterRef, Subquery, Sum


def backfill(apps, schema_editor):
    Assignment = apps.get_model("annotation", "Assignment")
    earlier = (
        Assignment.objects.filter(
            rater_id=OuterRef("rater_id"),
            session__study_id=OuterRef("session__study_id"),
            started_at__lt=OuterRef("started_at"),
        )
        .values("rater_id")
        .annotate(total=Sum("position"))
        .values("total")
    )
    for assignment in Assignment.objects.filter(state__in=["active", "paused"]).annotate(
        before=Subquery(earlier)
    ):
        if assignment.before:
            Assignment.objects.filter(pk=assignment.pk).update(answered_before=assignment.before)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0004_participation_qualification_set")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
