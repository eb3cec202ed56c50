"""Golden agreement (PLCC) and the qualification share, against scipy and by hand."""

import numpy as np
import pytest
from scipy import stats

from quality.stats.agreement import (
    golden_agreement_plcc,
    qualification_passed,
    qualification_share,
    within_tolerance,
)


def test_golden_plcc_equals_pearsonr():
    rng = np.random.default_rng(0)
    expert = rng.uniform(0, 100, 10)
    rater = expert + rng.normal(0, 20, 10)
    assert golden_agreement_plcc(rater_scores=rater, expert_means=expert) == pytest.approx(
        stats.pearsonr(rater, expert).statistic, abs=1e-12
    )


@pytest.mark.parametrize(
    ("rater", "expert"),
    [([1.0, 2.0], [1.0, 2.0]), ([5.0, 5.0, 5.0], [1.0, 2.0, 3.0]), ([1.0, 2.0, 3.0], [4.0] * 3)],
)
def test_golden_plcc_is_none_when_undefined(rater, expert):
    assert golden_agreement_plcc(rater_scores=rater, expert_means=expert) is None


def test_golden_plcc_refuses_different_lengths():
    with pytest.raises(ValueError):
        golden_agreement_plcc(rater_scores=[1, 2, 3], expert_means=[1, 2])


def test_qualification_share_includes_the_boundary():
    # given: sigma 10, tolerance 1.5 -> |diff| <= 15; diffs 14.9, 15 (on it), 0, 30
    within = within_tolerance(
        rater_scores=[64.9, 65.0, 50.0, 80.0],
        expert_means=[50.0] * 4,
        expert_sigmas=[10.0] * 4,
    )
    assert qualification_share(within) == 0.75


def test_an_item_the_experts_agreed_on_is_passed_by_the_exact_answer():
    # given: expert sigma 0 (every expert gave the same score)
    scores, means, sigmas = [50.0, 60.0, 70.0, 10.0], [50.0, 60.0, 70.5, 10.0], [0.0] * 4
    # when
    within = within_tolerance(rater_scores=scores, expert_means=means, expert_sigmas=sigmas)
    share = qualification_share(within)
    # then: the exact answers pass, the one 0.5 off does not
    assert within.tolist() == [True, True, False, True]
    assert share == 0.75 and qualification_passed(share)


def test_qualification_passes_at_exactly_the_share():
    assert qualification_passed(0.75) is True
    assert qualification_passed(0.74) is False
    assert qualification_passed(0.6, pass_share=0.6) is True


def test_qualification_share_of_no_answers_is_zero():
    assert qualification_share([]) == 0.0
