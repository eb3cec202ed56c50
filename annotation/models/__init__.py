from annotation.models.rating import Payment, QualificationAnswer, Rating
from annotation.models.session import Assignment, Participation, Rater, Session, SessionItem
from annotation.models.stimulus import ExpertScore, Stimulus, TutorialPair
from annotation.models.study import GAIA_DIMENSIONS, Dimension, Study

__all__ = [
    "GAIA_DIMENSIONS",
    "Assignment",
    "Dimension",
    "ExpertScore",
    "Participation",
    "Payment",
    "QualificationAnswer",
    "Rater",
    "Rating",
    "Session",
    "SessionItem",
    "Stimulus",
    "Study",
    "TutorialPair",
]
