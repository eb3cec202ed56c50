"""Side-by-side preference (WYD): the study's design settings and the judgments."""

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.models.rating import Answer
from annotation.models.stimulus import Stimulus
from annotation.models.study import Dimension, Study


class PreferenceSettings(models.Model):
    """A preference study's design, with WYD's numbers as defaults (PROTOCOL.md 3.1)."""

    class ScaleModel(models.TextChoices):
        BRADLEY_TERRY = "bradley-terry", "Bradley-Terry (a tie is half a win each way)"
        DAVIDSON = "davidson", "Davidson (ties as their own outcome)"
        RAO_KUPPER = "rao-kupper", "Rao-Kupper (ties as their own outcome)"
        THURSTONE = "thurstone", "Thurstone Case V (JOD units)"

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="preference")
    condition_pairs = models.TextField(
        blank=True,
        help_text="The condition pairs to compare, one 'a, b' per line; empty: every pair "
        "of the conditions the study's videos have.",
    )
    judgments_per_pair = models.PositiveIntegerField(
        default=25,
        validators=[MinValueValidator(1)],
        help_text="Comparisons of each condition pair (per question) in one session (WYD: 25).",
    )
    golden_pass_share = models.FloatField(
        default=0.8,
        validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="The session's golden gate: at least this share of its golden pairs right.",
    )
    scale_model = models.CharField(
        max_length=16, choices=ScaleModel.choices, default=ScaleModel.BRADLEY_TERRY
    )
    bootstrap = models.PositiveIntegerField(
        default=1000, help_text="Rater-bootstrap replicates of the scale's intervals."
    )
    active_pairs = models.BooleanField(
        default=False,
        help_text="Adaptive collection: make each rater's session when they start it, its "
        "pairs those of most expected information under the Thurstone scale with ties "
        "(docs/admins.md, 'Active pair choice'), instead of the balanced split.",
    )
    pair_repeat_limit = models.PositiveIntegerField(
        default=25,
        validators=[MinValueValidator(1)],
        help_text="Active pairs: the most times one rater is shown one condition pair for "
        "one question, over the whole study (each time another content).",
    )

    class Meta:
        verbose_name_plural = "preference settings"

    def __str__(self) -> str:
        return f"preference settings of {self.study.slug}"

    def clean(self) -> None:
        """Every line a pair of two different conditions, named once, and (once the study
        has videos) conditions its videos have: a typo would otherwise compare nothing."""
        _, problems = parse_condition_pairs(self.condition_pairs)
        if not problems and self.study_id:
            problems = unknown_conditions(self.condition_pairs, study_conditions(self.study_id))
        if problems:
            raise ValidationError({"condition_pairs": problems})


def _lines(text: str):
    """(line number, the line, its two or more names) of each line that is not blank:
    "a, b", or "a b" when neither name has a space."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            parts = [part.strip() for part in (line.split(",") if "," in line else line.split())]
            yield number, line.strip(), parts


def parse_condition_pairs(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(pairs, problems) of a `condition_pairs` text: one "a, b" per line (or "a b" when
    neither name has a space), blank lines skipped; each pair sorted, in their order."""
    pairs: list[tuple[str, str]] = []
    problems: list[str] = []
    for number, line, parts in _lines(text):
        if len(parts) != 2 or not all(parts):
            problems.append(f"line {number} ({line!r}): write two conditions, 'a, b'")
        elif parts[0] == parts[1]:
            problems.append(f"line {number}: {parts[0]!r} is compared with itself")
        elif tuple(sorted(parts)) in pairs:
            problems.append(f"line {number}: the pair {parts[0]}, {parts[1]} is listed twice")
        else:
            pairs.append(tuple(sorted(parts)))
    return pairs, problems


def study_conditions(study_id: int) -> set[str]:
    """The conditions the study's regular videos have."""
    return set(
        Stimulus.objects.filter(study_id=study_id, role=Stimulus.Role.STIMULUS)
        .exclude(condition="")
        .values_list("condition", flat=True)
    )


def unknown_conditions(text: str, conditions: set[str]) -> list[str]:
    """A problem per line of a `condition_pairs` text (pairs by `parse_condition_pairs`)
    naming a condition no video has, with the study's conditions (none while the study
    has no videos with a condition: they may be imported after the settings)."""
    if not conditions:
        return []
    problems = [
        f"line {number}: no video has the condition(s) {', '.join(unknown)}"
        for number, _, parts in _lines(text)
        if (unknown := [name for name in parts if name not in conditions])
    ]
    if problems:
        problems[-1] += f"; the study's conditions: {', '.join(sorted(conditions))}"
    return problems


class PreferenceJudgment(models.Model):
    """One side-by-side answer: which video (left, right, or neither) the rater chose, and
    which videos were on which side (the layout, so that position bias is measured)."""

    class Choice(models.TextChoices):
        LEFT = "left", "Left"
        RIGHT = "right", "Right"
        EQUAL = "equal", "Equally good/bad"

    answer = models.OneToOneField(Answer, on_delete=models.CASCADE, related_name="judgment")
    dimension = models.ForeignKey(Dimension, on_delete=models.PROTECT, related_name="+")
    left = models.ForeignKey(Stimulus, on_delete=models.PROTECT, related_name="+")
    right = models.ForeignKey(Stimulus, on_delete=models.PROTECT, related_name="+")
    choice = models.CharField(max_length=8, choices=Choice.choices)

    def __str__(self) -> str:
        return f"{self.answer_id}: {self.choice}"
