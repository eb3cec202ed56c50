"""Questionnaire golden agreement: per answered question with an experts' answer, whether
the rater's agrees (quality.stats.labels.exemplars, within the study's tolerances); the
session's golden gate and the qualification test read the share that agrees."""

from __future__ import annotations

from annotation.designs.base import Gate, QualificationScore, mean_gate, mean_qualification
from annotation.designs.questionnaire_answers import label_value
from annotation.designs.questionnaire_study import option_values, questions_of, settings_of
from annotation.models import Answer, ExpertLabel, Question, SessionItem, Stimulus
from quality.stats.labels.exemplars import Tolerances, answer_agrees


def tolerances_of(study) -> Tolerances:
    chosen = settings_of(study)
    return Tolerances(chosen.score_tolerance, chosen.ordinal_adjacent, chosen.tags_jaccard)


def _agreement_rows(study, answers) -> list[dict]:
    """Per answered question with an expert answer: the rater's and the experts' answer
    and whether they agree (comments are never compared)."""
    questions = {q.dimension_id: q for q in questions_of(study.pk)}
    tolerances = tolerances_of(study)
    answers = answers.select_related("item").prefetch_related("labels__tags")
    expert = {
        (e.stimulus_id, e.dimension_id): e.value
        for e in ExpertLabel.objects.filter(
            stimulus__in=Stimulus.objects.filter(memberships__item__in=answers.values("item"))
        )
    }
    rows = []
    for answer in answers:
        for label in answer.labels.all():
            question = questions.get(label.dimension_id)
            known = expert.get((label.stimulus_id, label.dimension_id))
            if question is None or known is None or question.kind == Question.Kind.COMMENT:
                continue
            given = label_value(label, question.kind, option_values(question))
            ordinal = question.kind == Question.Kind.ORDINAL
            agrees = answer_agrees(
                kind=question.kind,
                answer=given,
                expert=known,
                levels=[float(v) for v in option_values(question)] if ordinal else (),
                tolerances=tolerances,
            )
            rows.append(
                {
                    "item": str(answer.item.public_id),
                    "question": question.dimension.key,
                    "answer": given,
                    "expert": known,
                    "agrees": agrees,
                }
            )
    return rows


def golden_gate(*, study, assignment) -> Gate:
    golden = SessionItem.objects.filter(session_id=assignment.session_id, is_golden=True)
    rows = _agreement_rows(
        study, Answer.objects.filter(assignment=assignment, item__in=golden.values("item_id"))
    )
    return mean_gate(rows, key="agrees", pass_share=settings_of(study).golden_pass_share)


def qualification_score(*, participation, answers) -> QualificationScore:
    study = participation.study
    return mean_qualification(
        _agreement_rows(study, answers.order_by("id")),
        key="agrees",
        pass_share=study.qualification_pass_share,
    )


def gate_rule(*, study) -> str:
    share = settings_of(study).golden_pass_share
    return f"at least {share:.0%} of the golden answers agreeing with the experts'"
