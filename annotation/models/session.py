"""Sessions (the fixed split of a study), raters, their participation and assignments."""

import secrets

from django.conf import settings
from django.db import models

from annotation.models.item import Item
from annotation.models.study import Study


class Session(models.Model):
    """A fixed, seeded share of a study's items plus its golden items."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="sessions")
    index = models.PositiveIntegerField(help_text="1-based position in the study")
    seed = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "index"]
        constraints = [
            models.UniqueConstraint(fields=["study", "index"], name="session_index_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} session {self.index}"


class SessionItem(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="items")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="session_items")
    is_golden = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "item"], name="session_item_unique"),
        ]


def pseudonym_for(rater_pk: int) -> str:
    """The id researchers see for a rater: stable, and says nothing of the person."""
    return f"R{rater_pk:05d}"


class Rater(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rater"
    )
    external_id = models.CharField(
        max_length=120,
        null=True,
        blank=True,
        unique=True,
        help_text="Crowd-marketplace participant id (e.g. PROLIFIC_PID)",
    )
    # A simulated rater of a demo study: its answers are made up (frontend/demo), and
    # every page and export that lists raters says so.
    is_simulated = models.BooleanField(default=False)
    # When the person's identifying data was erased at their request
    # (annotation.services.erasure); their answers stay, anonymous.
    erased_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.external_id or self.user.get_username()

    @property
    def pseudonym(self) -> str:
        return pseudonym_for(self.pk)


def new_completion_code() -> str:
    return secrets.token_hex(4).upper()


class Participation(models.Model):
    """A rater in one study: consent, viewing check, tutorial and qualification state."""

    class Qualification(models.TextChoices):
        NOT_STARTED = "not_started", "Not started"
        IN_PROGRESS = "in_progress", "In progress"
        PASSED = "passed", "Passed"
        FAILED = "failed", "Failed"

    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="participations")
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participations")
    consent_at = models.DateTimeField(null=True, blank=True)
    # The consent text as the rater agreed to it (the study's may be edited later).
    consented_text = models.TextField(blank=True)
    viewing_check = models.JSONField(default=dict, blank=True)
    tutorial_done_at = models.DateTimeField(null=True, blank=True)
    qualification_state = models.CharField(
        max_length=16, choices=Qualification.choices, default=Qualification.NOT_STARTED
    )
    qualification_attempts = models.PositiveSmallIntegerField(default=0)
    qualification_share = models.FloatField(null=True, blank=True)
    qualification_detail = models.JSONField(default=list, blank=True)
    qualification_order_seed = models.BigIntegerField(default=0)
    # The current attempt's items, drawn once: {"attempt": n, "items": [item ids]}
    qualification_set = models.JSONField(default=dict, blank=True)
    marketplace_study_id = models.CharField(max_length=120, blank=True)
    marketplace_session_id = models.CharField(max_length=120, blank=True)
    completion_code = models.CharField(max_length=16, default=new_completion_code)
    is_excluded = models.BooleanField(default=False)
    excluded_reason = models.TextField(blank=True)
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    excluded_at = models.DateTimeField(null=True, blank=True)
    # The rater withdrew (annotation.services.withdrawal): final; they are excluded too.
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rater", "study"], name="participation_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.rater} in {self.study.slug}"


class Assignment(models.Model):
    """One rater rating one session, in a per-rater seeded order decided by the server."""

    class State(models.TextChoices):
        ACTIVE = "active", "Rating"
        FINISHED = "finished", "Finished"
        PAUSED = "paused", "Paused by admin"
        EXCLUDED = "excluded", "Excluded"

    rater = models.ForeignKey(Rater, on_delete=models.CASCADE, related_name="assignments")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="assignments")
    state = models.CharField(max_length=16, choices=State.choices, default=State.ACTIVE)
    order_seed = models.BigIntegerField()
    # Item ids in presentation order, derived once from order_seed and frozen.
    order = models.JSONField(default=list)
    position = models.PositiveIntegerField(default=0, help_text="Items answered so far")
    # The rater's answers in the study's earlier sessions when this one started: rest
    # breaks count every answer of the rater in the study, across sessions.
    answered_before = models.PositiveIntegerField(default=0)
    break_until = models.DateTimeField(null=True, blank=True)
    breaks_taken = models.PositiveSmallIntegerField(default=0)
    started_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    # When the rater answered the latest item, as the server counts it: the page's time
    # (answers may arrive late, from the offline window), never before the answer before
    # it nor after its arrival. A rest break runs from here (docs/rater-api.md).
    last_answered_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The session's golden agreement as its design measures it (sliders: the PLCC with the
    # expert means; preference: the share of golden pairs judged right).
    golden_agreement = models.FloatField(null=True, blank=True)
    eligible_for_next = models.BooleanField(null=True, blank=True)
    flagged_line_clicker = models.BooleanField(default=False)
    flag_reason = models.TextField(blank=True)
    stalls_total = models.PositiveIntegerField(default=0)
    admin_note = models.TextField(blank=True)
    # Who excluded this session and when (state EXCLUDED); the reason is the admin_note.
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    excluded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session", "started_at"]
        constraints = [
            models.UniqueConstraint(fields=["rater", "session"], name="assignment_unique"),
        ]
        indexes = [models.Index(fields=["state", "last_activity_at"])]

    def __str__(self) -> str:
        return f"{self.rater} / {self.session}"

    @property
    def length(self) -> int:
        return len(self.order)
