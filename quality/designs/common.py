"""What every design's analysis records the same way."""

from __future__ import annotations

from annotation.models import Study
from quality.selectors import exclusions_fingerprint
from quality.stats.exclusions import Exclusion


def selection_summary(*, study: Study, exclusions: list[Exclusion]) -> dict:
    """Which answers a run counted, besides the answers themselves: the gate setting and
    the fingerprint of the admins' exclusions (a run whose fingerprint differs from the
    study's now is out of date)."""
    return {
        "keep_failed_gate_sessions": study.keep_failed_gate_sessions,
        "exclusions_fingerprint": exclusions_fingerprint(study=study, exclusions=exclusions),
    }
