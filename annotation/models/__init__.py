from annotation.models.item import Item, ItemMember
from annotation.models.preference import PreferenceJudgment, PreferenceSettings
from annotation.models.ranking import RankingPlacement, RankingSettings
from annotation.models.rating import Answer, Payment, Rating
from annotation.models.session import Assignment, Participation, Rater, Session, SessionItem
from annotation.models.stimulus import ExpertScore, Stimulus, TutorialPair
from annotation.models.study import GAIA_DIMENSIONS, Dimension, Study

__all__ = [
    "GAIA_DIMENSIONS",
    "Answer",
    "Assignment",
    "Dimension",
    "ExpertScore",
    "Item",
    "ItemMember",
    "Participation",
    "Payment",
    "PreferenceJudgment",
    "PreferenceSettings",
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
