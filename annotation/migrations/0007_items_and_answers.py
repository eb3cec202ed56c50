"""Items and answer envelopes (the study-designs seam, DESIGNS.md).

Every stimulus that was rated on its own (roles stimulus, golden, qualification) becomes
a one-video item with the stimulus's public id; sessions, orders and qualification sets
name items; every answer (the rating rows or qualification answer rows sharing a
client_uuid) becomes an Answer envelope holding the telemetry, with its Rating rows as
its typed values; QualificationAnswer is gone (a qualification answer is an Answer with
its attempt). The values digest is the one annotation.designs.values_digest computes
(tests/annotation/test_migrations.py checks that they agree)."""

import hashlib
import json
import uuid

import django.db.models.deletion
from django.db import migrations, models

import annotation.models.study

BATCH = 5000


def _digest(scores: dict) -> str:
    text = json.dumps(
        {"scores": {k: float(v) for k, v in scores.items()}},
        sort_keys=True,
        separators=(",", ":"),
        allow_nan=False,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def forward(apps, schema_editor):
    """Items, and answers of the session ratings."""
    Stimulus = apps.get_model("annotation", "Stimulus")
    Item = apps.get_model("annotation", "Item")
    ItemMember = apps.get_model("annotation", "ItemMember")
    SessionItem = apps.get_model("annotation", "SessionItem")
    Assignment = apps.get_model("annotation", "Assignment")
    Participation = apps.get_model("annotation", "Participation")
    Rating = apps.get_model("annotation", "Rating")
    Answer = apps.get_model("annotation", "Answer")

    # 1. one item per stimulus rated on its own
    item_of: dict[int, int] = {}
    rated = Stimulus.objects.filter(role__in=("stimulus", "golden", "qualification"))
    stimuli = list(rated.order_by("pk").values_list("pk", "study_id", "public_id", "role"))
    for start in range(0, len(stimuli), BATCH):
        chunk = stimuli[start : start + BATCH]
        items = Item.objects.bulk_create(
            Item(study_id=study, public_id=public_id, role=role)
            for _, study, public_id, role in chunk
        )
        ItemMember.objects.bulk_create(
            ItemMember(item_id=item.pk, stimulus_id=pk, slot=0)
            for item, (pk, *_rest) in zip(items, chunk, strict=True)
        )
        item_of.update({pk: item.pk for item, (pk, *_rest) in zip(items, chunk, strict=True)})

    # 2. sessions, orders and qualification sets name items
    rows = list(SessionItem.objects.only("pk", "stimulus_id"))
    for row in rows:
        row.item_id = item_of[row.stimulus_id]
    SessionItem.objects.bulk_update(rows, ["item"], batch_size=BATCH)
    assignments = list(Assignment.objects.only("pk", "order"))
    for assignment in assignments:
        assignment.order = [item_of[pk] for pk in assignment.order]
    Assignment.objects.bulk_update(assignments, ["order"], batch_size=BATCH)
    for p in Participation.objects.exclude(qualification_set={}).only("pk", "qualification_set"):
        frozen = p.qualification_set
        if frozen.get("items"):
            p.qualification_set = {**frozen, "items": [item_of[pk] for pk in frozen["items"]]}
            p.save(update_fields=["qualification_set"])

    # 3. answers from session ratings; rows: (pk, client_uuid, stimulus, dimension id,
    # dimension key, score, assignment, rater, study, telemetry...)
    telemetry = ("shown_at", "answered_at", "received_at", "watch_time_ms", "plays", "stalls")
    participations = {
        (rater, study): pk
        for pk, rater, study in Participation.objects.values_list("pk", "rater_id", "study_id")
    }
    public_id = {pk: str(pid) for pk, _, pid, _ in stimuli}
    ratings = Rating.objects.order_by("client_uuid", "pk").values_list(
        "pk", "client_uuid", "stimulus_id", "dimension_id", "dimension__key", "score",
        "assignment_id", "assignment__rater_id", "assignment__session__study_id", *telemetry,
    )  # fmt: skip
    for groups in _grouped(ratings):
        answers = []
        for group in groups:
            first = group[0]
            key = (first[7], first[8])
            if key not in participations:  # rows written without the flow (old tests)
                participations[key] = Participation.objects.create(
                    rater_id=first[7], study_id=first[8]
                ).pk
            answers.append(_answer(Answer, group, item_of, public_id, participations[key]))
            answers[-1].assignment_id = first[6]
        created = _create(Answer, answers, groups)
        linked = list(Rating.objects.filter(pk__in=[r[0] for g in groups for r in g]).only("pk"))
        answer_of = {r[0]: a.pk for a, g in zip(created, groups, strict=True) for r in g}
        for row in linked:
            row.answer_id = answer_of[row.pk]
        Rating.objects.bulk_update(linked, ["answer"], batch_size=BATCH)
    _check_now(schema_editor)


def _check_now(schema_editor) -> None:
    """Check the deferred foreign keys of the rows written so far now: PostgreSQL refuses
    to alter a table with checks still pending, and the next operations alter these."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def forward_qualification(apps, schema_editor):
    """After the rating rows lost their envelope columns: qualification answers become
    answers with their attempt and rating rows."""
    Stimulus = apps.get_model("annotation", "Stimulus")
    ItemMember = apps.get_model("annotation", "ItemMember")
    Rating = apps.get_model("annotation", "Rating")
    QualificationAnswer = apps.get_model("annotation", "QualificationAnswer")
    Answer = apps.get_model("annotation", "Answer")
    telemetry = ("shown_at", "answered_at", "received_at", "watch_time_ms", "plays", "stalls")
    item_of = dict(ItemMember.objects.values_list("stimulus_id", "item_id"))
    public_id = {pk: str(pid) for pk, pid in Stimulus.objects.values_list("pk", "public_id")}
    qualification = QualificationAnswer.objects.order_by("client_uuid", "pk").values_list(
        "pk", "client_uuid", "stimulus_id", "dimension_id", "dimension__key", "score",
        "attempt", "participation_id", "participation__study_id", *telemetry,
    )  # fmt: skip
    for groups in _grouped(qualification):
        answers = []
        for group in groups:
            answers.append(_answer(Answer, group, item_of, public_id, group[0][7]))
            answers[-1].attempt = group[0][6]
        created = _create(Answer, answers, groups)
        Rating.objects.bulk_create(
            Rating(answer_id=a.pk, stimulus_id=r[2], dimension_id=r[3], score=r[5])
            for a, g in zip(created, groups, strict=True)
            for r in g
        )
    _check_now(schema_editor)


def _grouped(rows):
    """Lists of up to BATCH answers, each the rows of one client_uuid."""
    groups, current = [], []
    for row in rows.iterator(chunk_size=BATCH):
        if current and current[0][1] != row[1]:
            groups.append(current)
            current = []
            if len(groups) >= BATCH:
                yield groups
                groups = []
        current.append(row)
    if current:
        groups.append(current)
    if groups:
        yield groups


def _answer(Answer, group, item_of, public_id, participation_id):
    first = group[0]
    return Answer(
        client_uuid=first[1],
        item_id=item_of[first[2]],
        participation_id=participation_id,
        layout=[public_id[first[2]]],
        values_digest=_digest({row[4]: row[5] for row in group}),
        shown_at=first[9],
        answered_at=first[10],
        watch_time_ms=first[12],
        plays=first[13],
        stalls=first[14],
    )


def _create(Answer, answers, groups):
    created = Answer.objects.bulk_create(answers, batch_size=BATCH)
    # received_at is auto_now_add, so bulk_create stamped now: keep the rows' own
    for answer, group in zip(created, groups, strict=True):
        answer.received_at = group[0][11]
    Answer.objects.bulk_update(created, ["received_at"], batch_size=BATCH)
    return created


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_exclusions_on_record"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="design",
            field=models.CharField(
                choices=annotation.models.study._design_choices, default="slider", max_length=32
            ),
        ),
        migrations.AlterField(
            model_name="assignment",
            name="position",
            field=models.PositiveIntegerField(default=0, help_text="Items answered so far"),
        ),
        migrations.AddField(
            model_name="study",
            name="open_to_signed_in",
            field=models.BooleanField(
                default=False,
                help_text="Any signed-in rater may open the study without its link "
                "(otherwise a rater enters through the link only).",
            ),
        ),
        migrations.AddField(
            model_name="stimulus",
            name="condition",
            field=models.CharField(blank=True, max_length=120),
        ),
        migrations.AddField(
            model_name="stimulus",
            name="content",
            field=models.CharField(blank=True, max_length=120),
        ),
        migrations.AlterField(
            model_name="stimulus",
            name="role",
            field=models.CharField(
                choices=[
                    ("stimulus", "Stimulus"),
                    ("golden", "Golden"),
                    ("qualification", "Qualification"),
                    ("tutorial", "Tutorial"),
                    ("reference", "Reference"),
                ],
                default="stimulus",
                max_length=16,
            ),
        ),
        migrations.AddIndex(
            model_name="stimulus",
            index=models.Index(
                fields=["study", "content", "condition"], name="stimulus_content_idx"
            ),
        ),
        migrations.CreateModel(
            name="Item",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("public_id", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ("role", models.CharField(choices=[("stimulus", "Stimulus"), ("golden", "Golden"), ("qualification", "Qualification")], default="stimulus", max_length=16)),
                ("content", models.CharField(blank=True, help_text="What the videos show in common (a content id)", max_length=120)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("dimension", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="items", to="annotation.dimension")),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="items", to="annotation.study")),
            ],
            options={
                "ordering": ["study", "id"],
                "indexes": [models.Index(fields=["study", "role"], name="item_study_role_idx")],
            },
        ),
        migrations.CreateModel(
            name="ItemMember",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("slot", models.PositiveSmallIntegerField()),
                ("part", models.CharField(choices=[("shown", "Shown and judged"), ("reference", "Reference")], default="shown", max_length=16)),
                ("expected", models.CharField(blank=True, choices=[("", "No expectation"), ("best", "Clearly the best"), ("worst", "Clearly the worst")], default="", max_length=8)),
                ("item", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="members", to="annotation.item")),
                ("stimulus", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to="annotation.stimulus")),
            ],
            options={
                "ordering": ["item", "slot"],
                "constraints": [
                    models.UniqueConstraint(fields=("item", "slot"), name="item_member_slot_unique"),
                    models.UniqueConstraint(fields=("item", "stimulus"), name="item_member_unique"),
                ],
            },
        ),
        migrations.AddField(
            model_name="sessionitem",
            name="item",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="session_items", to="annotation.item"),
        ),
        migrations.CreateModel(
            name="Answer",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("client_uuid", models.UUIDField(default=uuid.uuid4, help_text="Chosen by the browser; makes resending harmless", unique=True)),
                ("attempt", models.PositiveSmallIntegerField(blank=True, help_text="The qualification attempt (qualification answers only)", null=True)),
                ("layout", models.JSONField(blank=True, default=list)),
                ("values_digest", models.CharField(max_length=64)),
                ("shown_at", models.DateTimeField(blank=True, null=True)),
                ("answered_at", models.DateTimeField(blank=True, null=True)),
                ("received_at", models.DateTimeField(auto_now_add=True)),
                ("watch_time_ms", models.PositiveIntegerField(default=0)),
                ("plays", models.PositiveSmallIntegerField(default=0)),
                ("stalls", models.PositiveSmallIntegerField(default=0)),
                ("assignment", models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="answers", to="annotation.assignment")),
                ("item", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="answers", to="annotation.item")),
                ("participation", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="answers", to="annotation.participation")),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(condition=models.Q(("assignment__isnull", False)), fields=("assignment", "item"), name="answer_once_per_session_item"),
                    models.UniqueConstraint(condition=models.Q(("attempt__isnull", False)), fields=("participation", "attempt", "item"), name="answer_once_per_qualification_item"),
                    models.CheckConstraint(condition=models.Q(models.Q(("assignment__isnull", False), ("attempt__isnull", True)), models.Q(("assignment__isnull", True), ("attempt__isnull", False)), _connector="OR"), name="answer_in_a_session_or_the_qualification"),
                ],
            },
        ),
        migrations.AddField(
            model_name="rating",
            name="answer",
            field=models.ForeignKey(db_index=False, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="ratings", to="annotation.answer"),
        ),
        migrations.RunPython(forward, migrations.RunPython.noop),
        migrations.RemoveConstraint(model_name="sessionitem", name="session_item_unique"),
        migrations.RemoveField(model_name="sessionitem", name="stimulus"),
        migrations.AlterField(
            model_name="sessionitem",
            name="item",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="session_items", to="annotation.item"),
        ),
        migrations.AddConstraint(
            model_name="sessionitem",
            constraint=models.UniqueConstraint(fields=("session", "item"), name="session_item_unique"),
        ),
        migrations.RemoveConstraint(model_name="rating", name="rating_client_uuid_unique"),
        migrations.RemoveConstraint(model_name="rating", name="rating_once_per_item"),
        migrations.RemoveField(model_name="rating", name="assignment"),
        migrations.RemoveField(model_name="rating", name="client_uuid"),
        migrations.RemoveField(model_name="rating", name="shown_at"),
        migrations.RemoveField(model_name="rating", name="answered_at"),
        migrations.RemoveField(model_name="rating", name="received_at"),
        migrations.RemoveField(model_name="rating", name="watch_time_ms"),
        migrations.RemoveField(model_name="rating", name="plays"),
        migrations.RemoveField(model_name="rating", name="stalls"),
        migrations.RunPython(forward_qualification, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="rating",
            name="answer",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name="ratings", to="annotation.answer"),
        ),
        migrations.AlterField(
            model_name="rating",
            name="stimulus",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name="ratings", to="annotation.stimulus"),
        ),
        migrations.AddConstraint(
            model_name="rating",
            constraint=models.UniqueConstraint(fields=("answer", "dimension"), name="rating_once_per_answer"),
        ),
        migrations.DeleteModel(name="QualificationAnswer"),
        migrations.RenameField(
            model_name="assignment", old_name="golden_agreement_plcc", new_name="golden_agreement"
        ),
    ]
