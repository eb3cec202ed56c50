from annotation.models.adaptive import AdaptiveSettings, SettledStimulus
from annotation.models.item import Item, ItemMember
from annotation.models.preference import PreferenceJudgment, PreferenceSettings
from annotation.models.propose import (
    Action,
    ActionGroup,
    Candidate,
    Proposal,
    ProposalFlags,
    ProposeVerifySettings,
    StageLink,
    Verdict,
)
from annotation.models.questionnaire import (
    BatchAudit,
    ExpertLabel,
    LabelAnswer,
    LabelTag,
    Question,
    QuestionnaireSettings,
)
from annotation.models.ranking import RankingPlacement, RankingSettings
from annotation.models.rating import Answer, Payment, PlaybackReport, Rating
from annotation.models.session import Assignment, Participation, Rater, Session, SessionItem
from annotation.models.stimulus import ExpertScore, Stimulus, TutorialPair
from annotation.models.study import GAIA_DIMENSIONS, Dimension, Study

__all__ = [
    "AdaptiveSettings",
    "SettledStimulus",
    "Action",
    "ActionGroup",
    "Candidate",
    "Proposal",
    "ProposalFlags",
    "ProposeVerifySettings",
    "StageLink",
    "Verdict",
    "GAIA_DIMENSIONS",
    "Answer",
    "Assignment",
    "BatchAudit",
    "Dimension",
    "ExpertLabel",
    "ExpertScore",
    "Item",
    "LabelAnswer",
    "LabelTag",
    "ItemMember",
    "Participation",
    "Payment",
    "PlaybackReport",
    "PreferenceJudgment",
    "PreferenceSettings",
    "Question",
    "QuestionnaireSettings",
    "RankingPlacement",
    "RankingSettings",
    "Rater",
    "Rating",
    "Session",
    "SessionItem",
    "Stimulus",
    "Study",
    "TutorialPair",
]
