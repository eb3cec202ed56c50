"""Items: what one answer is about (DESIGNS.md). One video for a slider study; two
videos of two conditions for one content (and its reference) for a preference study; N
videos for one prompt for a ranking; ... The study's design builds them from its stimuli
(annotation/designs); sessions and the qualification test are made of items."""

import uuid

from django.db import models

from annotation.models.stimulus import Stimulus
from annotation.models.study import Dimension, Study


class Item(models.Model):
    class Role(models.TextChoices):
        STIMULUS = "stimulus", "Stimulus"
        GOLDEN = "golden", "Golden"
        QUALIFICATION = "qualification", "Qualification"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    # Opaque id the rater's answers name. A single-video item takes its video's public id,
    # so that the rater API keeps naming a video by the id of its media URLs.
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.STIMULUS)
    # The question asked of a multi-video item (a preference template, a ranking
    # criterion); empty where one answer covers every dimension (sliders).
    dimension = models.ForeignKey(
        Dimension, null=True, blank=True, on_delete=models.CASCADE, related_name="items"
    )
    content = models.CharField(
        max_length=120, blank=True, help_text="What the videos show in common (a content id)"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "id"]
        indexes = [models.Index(fields=["study", "role"], name="item_study_role_idx")]

    def __str__(self) -> str:
        return f"{self.study_id}:{self.role}:{self.public_id}"


class ItemMember(models.Model):
    """A video of an item, in the item's own order (the order the rater sees is shuffled
    per rater by the design and stored with the answer)."""

    class Part(models.TextChoices):
        SHOWN = "shown", "Shown and judged"
        REFERENCE = "reference", "Reference"

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="members")
    stimulus = models.ForeignKey(Stimulus, on_delete=models.CASCADE, related_name="memberships")

    class Expected(models.TextChoices):
        NONE = "", "No expectation"
        BEST = "best", "Clearly the best"
        WORST = "worst", "Clearly the worst"

    slot = models.PositiveSmallIntegerField()
    part = models.CharField(max_length=16, choices=Part.choices, default=Part.SHOWN)
    # A golden item's known answer (a clean video against a degraded copy of itself);
    # never sent to a rater.
    expected = models.CharField(max_length=8, choices=Expected.choices, default="", blank=True)

    class Meta:
        ordering = ["item", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["item", "slot"], name="item_member_slot_unique"),
            models.UniqueConstraint(fields=["item", "stimulus"], name="item_member_unique"),
        ]
