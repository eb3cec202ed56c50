"""Ranking (VGA-Bench user study): the study's design settings and the placements."""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.models.rating import Answer
from annotation.models.stimulus import Stimulus
from annotation.models.study import Dimension, Study


class RankingSettings(models.Model):
    """A ranking study's design (PROTOCOL.md 3.3)."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="ranking")
    ties_allowed = models.BooleanField(
        default=False, help_text="Raters may put two or more videos in the same place."
    )
    golden_pass_share = models.FloatField(
        default=1.0,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="The session's golden gate: at least this share of its golden items with "
        "the clearly best video placed above the clearly worst one.",
    )
    against_metric = models.CharField(
        max_length=60,
        blank=True,
        help_text="The automatic metric the human rankings are compared with (Recall@K, "
        "Kendall tau, Spearman rho): a metric the GPU workers scored, averaged per "
        "condition, higher is better; empty: the first the study's videos have.",
    )
    bootstrap = models.PositiveIntegerField(
        default=1000, help_text="Rater-bootstrap replicates of the analysis' intervals."
    )

    class Meta:
        verbose_name_plural = "ranking settings"

    def __str__(self) -> str:
        return f"ranking settings of {self.study.slug}"


class RankingPlacement(models.Model):
    """Where one video of a ranking answer was placed: `rank` 1 is the best (tied videos
    share a rank), `slot` where the rater was shown it (the per-rater layout)."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="placements")
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="+")
    stimulus = models.ForeignKey(Stimulus, on_delete=models.PROTECT, related_name="+")
    rank = models.PositiveSmallIntegerField()
    slot = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["answer", "rank", "slot"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "stimulus"], name="ranking_placement_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.answer_id}: {self.stimulus_id} at {self.rank}"
