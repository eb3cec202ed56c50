"""Propose-then-verify golden agreement: on golden segments, a proposer's recall of the
experts' complete labels and a verifier's share of verdicts agreeing with them; the
session's golden gate and the qualification test read it."""

from __future__ import annotations

from annotation.designs.base import Gate, QualificationScore, mean_gate, mean_qualification
from annotation.designs.propose_study import PROPOSE, settings_of
from annotation.models import Answer, ExpertLabel, SessionItem


def _golden_rows(answers) -> list[dict]:
    """Per golden answer: a proposer's recall of the experts' labels, or a verifier's
    share of verdicts that agree with them (yes exactly for the experts' labels)."""
    rows = []
    answers = answers.select_related("item__dimension").prefetch_related(
        "item__members__stimulus", "proposals__action", "verdicts__action"
    )
    answers = list(answers)
    experts = dict(
        ExpertLabel.objects.filter(
            stimulus__in=[a.item.members.all()[0].stimulus_id for a in answers],
            dimension__key=PROPOSE,
        ).values_list("stimulus_id", "value")
    )
    for answer in answers:
        expert = set(experts.get(answer.item.members.all()[0].stimulus_id, []))
        if not expert:
            continue
        if answer.item.dimension.key == PROPOSE:
            given = {p.action.action_id for p in answer.proposals.all()}
            score = len(given & expert) / len(expert)
        else:
            verdicts = answer.verdicts.all()
            right = sum(v.verdict == (v.action.action_id in expert) for v in verdicts)
            score = right / len(verdicts) if verdicts else 0.0
        rows.append(
            {"item": str(answer.item.public_id), "stage": answer.item.dimension.key,
             "score": round(score, 6)}
        )  # fmt: skip
    return rows


def golden_gate(*, study, assignment) -> Gate:
    golden = SessionItem.objects.filter(session_id=assignment.session_id, is_golden=True)
    rows = _golden_rows(
        Answer.objects.filter(assignment=assignment, item__in=golden.values("item_id"))
    )
    return mean_gate(rows, key="score", pass_share=settings_of(study).golden_pass_share)


def qualification_score(*, participation, answers) -> QualificationScore:
    return mean_qualification(
        _golden_rows(answers.order_by("id")),
        key="score",
        pass_share=participation.study.qualification_pass_share,
    )


def gate_rule(*, study) -> str:
    share = settings_of(study).golden_pass_share
    return (
        f"a proposer's recall of the experts' labels on the golden segments (a verifier's "
        f"agreement with them) of at least {share:.0%}"
    )
