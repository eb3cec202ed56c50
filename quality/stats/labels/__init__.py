"""Questionnaire labels (VGA-Bench): crowd answers to expert-defined questions turned
into one label per (item, question), with agreement figures and audit sampling plans.

Entry point: ``analyse(answers=..., settings=LabelSettings(...)) -> LabelResult``.
"""

from quality.stats.labels.acceptance import audit_sample, operating_characteristic
from quality.stats.labels.analysis import analyse
from quality.stats.labels.answers import ANSWER_COLUMNS, KINDS, AnswerTable, encode_answers
from quality.stats.labels.csv_input import read_answers_csv, read_text_csv
from quality.stats.labels.dawid_skene import DawidSkeneFit, fit_dawid_skene
from quality.stats.labels.result import (
    LABEL_COLUMNS,
    LABELS_VERSION,
    METHODS,
    RATER_AGREEMENT_COLUMNS,
    DawidSkeneQuestion,
    LabelResult,
    LabelSettings,
)
from quality.stats.labels.table import LabelsError

__all__ = [
    "ANSWER_COLUMNS",
    "KINDS",
    "LABELS_VERSION",
    "LABEL_COLUMNS",
    "METHODS",
    "RATER_AGREEMENT_COLUMNS",
    "AnswerTable",
    "DawidSkeneFit",
    "DawidSkeneQuestion",
    "LabelResult",
    "LabelSettings",
    "LabelsError",
    "analyse",
    "audit_sample",
    "encode_answers",
    "fit_dawid_skene",
    "operating_characteristic",
    "read_answers_csv",
    "read_text_csv",
]
