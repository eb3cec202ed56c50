"""Propose-then-verify labelling (AVA): the verify stage's kept labels and agreement
(``verify_labels``) and the propose stage's recall on golden items
(``proposal_recall``)."""

from quality.stats.labels.table import LabelsError
from quality.stats.verify.recall import (
    PROPOSAL_COLUMNS,
    TRUTH_COLUMNS,
    ProposalRecall,
    proposal_recall,
)
from quality.stats.verify.verdicts import (
    VERDICT_COLUMNS,
    VERIFIED_COLUMNS,
    VERIFIER_COLUMNS,
    VERIFY_VERSION,
    VerifyResult,
    verify_labels,
)

__all__ = [
    "PROPOSAL_COLUMNS",
    "TRUTH_COLUMNS",
    "VERDICT_COLUMNS",
    "VERIFIED_COLUMNS",
    "VERIFIER_COLUMNS",
    "VERIFY_VERSION",
    "LabelsError",
    "ProposalRecall",
    "VerifyResult",
    "proposal_recall",
    "verify_labels",
]
