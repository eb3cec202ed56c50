"""The Django admin, set up for study admins: search, filters and inlines.

One module a family of models; importing them here registers their admins: study
(studies; study_inlines, their dimensions and design settings), study_content (items,
sessions, tutorial pairs), raters (raters, participations, assignments, payments),
answers (answers, playback reports), and the designs' own models (questionnaire,
propose).
"""

from annotation.admin import (  # noqa: F401
    answers,
    propose,
    questionnaire,
    raters,
    study,
    study_content,
)
