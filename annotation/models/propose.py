"""Propose, then verify (AVA, PROTOCOL.md 3.4): the study's design settings and action
vocabulary, stage 1's proposed labels and flags, stage 2's candidates and verdicts, and
the link from a segment's propose item to its verify item (provenance)."""

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.models.item import Item
from annotation.models.rating import Answer
from annotation.models.study import Study


class ProposeVerifySettings(models.Model):
    """A propose-then-verify study's design, with AVA's numbers as defaults."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="propose_verify")
    proposers_per_item = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text="Raters who propose labels for each segment (AVA: 3).",
    )
    verifiers_per_item = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text="Raters who verify each segment's candidate labels (AVA: 3).",
    )
    keep_at_least = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(1)],
        help_text="A label is kept when at least this many verifiers say yes (AVA: 2 of 3).",
    )
    segment_seconds = models.FloatField(
        default=3.0,
        validators=[MinValueValidator(0.5), MaxValueValidator(30)],
        help_text="Length of the looping segment around each keyframe (AVA: 3 s).",
    )
    max_labels = models.PositiveSmallIntegerField(
        default=7, help_text="Labels a proposer may give a segment at most (AVA: 7)."
    )
    golden_pass_share = models.FloatField(
        default=0.7,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="The session's golden gate: proposers' recall of the experts' labels, or "
        "verifiers' share of verdicts agreeing with the experts, at least this.",
    )
    vocabulary_source = models.CharField(max_length=300, blank=True)

    class Meta:
        verbose_name_plural = "propose-verify settings"

    def __str__(self) -> str:
        return f"propose-verify settings of {self.study.slug}"

    def clean(self) -> None:
        errors = {}
        if (
            self.keep_at_least is not None
            and self.verifiers_per_item is not None
            and self.keep_at_least > self.verifiers_per_item
        ):
            errors["keep_at_least"] = (
                f"No label could be kept: {self.keep_at_least} yes verdicts asked of "
                f"{self.verifiers_per_item} verifiers."
            )
        if self.max_labels is not None and self.max_labels < 1:
            errors["max_labels"] = "A proposer must be able to give at least one label."
        if errors:
            raise ValidationError(errors)


class ActionGroup(models.Model):
    """A group of the vocabulary with its limit per segment (AVA: 1 pose, required; up
    to 3 person-object and 3 person-person interactions)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="action_groups")
    key = models.SlugField(max_length=40)
    label = models.CharField(max_length=80)
    limit = models.PositiveSmallIntegerField(default=3)
    required = models.BooleanField(default=False)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["study", "order"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="action_group_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}:{self.key}"


class Action(models.Model):
    """A label of the study's vocabulary; `action_id` is the id its exports use (AVA's)."""

    group = models.ForeignKey(ActionGroup, on_delete=models.CASCADE, related_name="actions")
    action_id = models.PositiveIntegerField()
    name = models.CharField(max_length=120)

    class Meta:
        ordering = ["action_id"]
        constraints = [
            models.UniqueConstraint(fields=["group", "action_id"], name="action_id_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.action_id} {self.name}"


class Proposal(models.Model):
    """A label a proposer gave a segment (stage 1): one row per label."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="proposals")
    action = models.ForeignKey(Action, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "action"], name="proposal_once"),
        ]


class ProposalFlags(models.Model):
    """What else a proposer said of a segment: an action the vocabulary lacks, and the
    flags that set a segment aside for staff when a majority raises them."""

    answer = models.OneToOneField(Answer, on_delete=models.CASCADE, related_name="flags")
    other_action = models.CharField(max_length=200, blank=True)
    inappropriate = models.BooleanField(default=False, help_text="Blocked or inappropriate")
    bad_box = models.BooleanField(default=False, help_text="The box is not one person")


class StageLink(models.Model):
    """A segment's propose item once its proposals are in: the verify item made from
    them (or, when a majority of its proposers flagged it, set aside for staff with the
    flags). One row per propose item: made once, however many answers arrive at once."""

    propose_item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="verify_link")
    verify_item = models.OneToOneField(
        Item, null=True, blank=True, on_delete=models.CASCADE, related_name="propose_link"
    )
    set_aside = models.BooleanField(default=False)
    flags = models.JSONField(default=dict, blank=True)  # {"inappropriate": n, "bad_box": n}
    # The answers (ids) whose proposals made it: the candidates' provenance.
    proposals = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)


class Candidate(models.Model):
    """A candidate label of a verify item, in the order verifiers see them (shuffled once);
    nothing here says who proposed it or how many did."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="candidates")
    action = models.ForeignKey(Action, on_delete=models.PROTECT, related_name="+")
    order = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["item", "order"]
        constraints = [
            models.UniqueConstraint(fields=["item", "action"], name="candidate_once"),
        ]


class Verdict(models.Model):
    """A verifier's yes or no on one candidate label (stage 2)."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="verdicts")
    action = models.ForeignKey(Action, on_delete=models.PROTECT, related_name="+")
    verdict = models.BooleanField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["answer", "action"], name="verdict_once"),
        ]
