"""Side-by-side preference statistics (WYD design, PROTOCOL.md Sec. 3.1), pure numpy/scipy.

Input: the long judgments table ``rater_id, question, content_id, left, right, choice``
(``judgments``). ``analyse`` gives per pair wins, ties and a Wilson interval, per question
a scale of the conditions (Bradley-Terry with ties as half wins, Davidson, Rao-Kupper or
Thurstone Case V in JOD) with rater-bootstrap intervals and ranks, per-rater position
bias, agreement and circular triads with a screening rule, and Krippendorff's alpha.
"""

from quality.stats.preference.analysis import (
    PREFERENCE_VERSION,
    SCALE_COLUMNS,
    PreferenceResult,
    PreferenceSettings,
    ScaleUndefinedError,
    analyse,
)
from quality.stats.preference.counts import PAIR_COLUMNS, wilson_interval
from quality.stats.preference.judgments import (
    JUDGMENT_COLUMNS,
    JudgmentsError,
    encode_judgments,
    read_judgments_csv,
)
from quality.stats.preference.models import MODELS
from quality.stats.preference.raters import RATER_COLUMNS
from quality.stats.preference.reliability import nominal_alpha

__all__ = [
    "JUDGMENT_COLUMNS",
    "MODELS",
    "PAIR_COLUMNS",
    "PREFERENCE_VERSION",
    "RATER_COLUMNS",
    "SCALE_COLUMNS",
    "JudgmentsError",
    "PreferenceResult",
    "PreferenceSettings",
    "ScaleUndefinedError",
    "analyse",
    "encode_judgments",
    "nominal_alpha",
    "read_judgments_csv",
    "wilson_interval",
]
