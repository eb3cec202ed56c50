"""The preference scales against independent oracles: choix (Bradley-Terry), maximum
likelihood written here with scipy.optimize (Davidson, Rao-Kupper, Thurstone), closed
forms on two conditions, and pwcmp's chain example (Thurstone Case V in JOD)."""

import itertools

import choix
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import norm

from quality.stats.preference import MODELS, PreferenceSettings, ScaleUndefinedError, analyse
from quality.stats.preference.fit import fit_batch


def judgments_from_counts(counts: dict[tuple[str, str], tuple[int, int, int]]) -> pd.DataFrame:
    """(a, b) -> (a preferred, b preferred, equal) as judgment rows of one rater, a on the
    left for even rows and on the right for odd ones."""
    rows = []
    for (a, b), (wins_a, wins_b, ties) in counts.items():
        answers = ["a"] * wins_a + ["b"] * wins_b + ["equal"] * ties
        for i, answer in enumerate(answers):
            left, right = (a, b) if i % 2 == 0 else (b, a)
            if answer == "equal":
                choice = "equal"
            else:
                winner = a if answer == "a" else b
                choice = "left" if winner == left else "right"
            rows.append(("r1", "quality", f"c{i}", left, right, choice))
    return pd.DataFrame(
        rows, columns=["rater_id", "question", "content_id", "left", "right", "choice"]
    )


def random_counts(seed: int, conditions: int = 5, never_zero: bool = True):
    rng = np.random.default_rng(seed)
    names = [f"m{i}" for i in range(conditions)]
    low = 1 if never_zero else 0
    return {
        (a, b): (int(rng.integers(low, 15)), int(rng.integers(low, 15)), int(rng.integers(0, 6)))
        for a, b in itertools.combinations(names, 2)
    }


def scores_of(result, question="quality") -> dict[str, float]:
    part = result.scale[result.scale["question"] == question]
    return dict(zip(part["condition"], part["score"], strict=True))


def settings(model: str, prior: float = 0.0, bootstrap: int = 0) -> PreferenceSettings:
    return PreferenceSettings(model=model, prior=prior, bootstrap=bootstrap, screen=False)


def centred(values) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return values - values.mean()


def choix_half_win_data(counts, names):
    """Each decisive judgment twice, each tie once each way (the half-win likelihood)."""
    index = {name: i for i, name in enumerate(names)}
    data = []
    for (a, b), (wins_a, wins_b, ties) in counts.items():
        data += [(index[a], index[b])] * (2 * wins_a + ties)
        data += [(index[b], index[a])] * (2 * wins_b + ties)
    return data


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bradley_terry_equals_choix_on_the_half_win_data(seed):
    # given
    counts = random_counts(seed)
    names = sorted({c for pair in counts for c in pair})
    # when
    ours = scores_of(analyse(judgments_from_counts(counts), settings=settings("bradley-terry")))
    theirs = choix.opt_pairwise(len(names), choix_half_win_data(counts, names), alpha=0, tol=1e-12)
    # then
    np.testing.assert_allclose(
        centred([ours[n] for n in names]), centred(theirs), atol=1e-6, rtol=0
    )


def test_the_prior_is_choix_s_gaussian_penalty_on_the_half_win_data():
    # given: our penalty prior/2 sum s^2 on the half-win log-likelihood is, doubled,
    # choix's alpha * sum s^2 on the doubled data, with alpha = prior
    counts = random_counts(4)
    names = sorted({c for pair in counts for c in pair})
    # when
    ours = scores_of(
        analyse(judgments_from_counts(counts), settings=settings("bradley-terry", prior=0.5))
    )
    theirs = choix.opt_pairwise(
        len(names), choix_half_win_data(counts, names), alpha=0.5, tol=1e-12
    )
    # then: the penalised optimum is centred by itself, as is choix's
    np.testing.assert_allclose([ours[n] for n in names], theirs, atol=1e-6, rtol=0)


def plain_likelihood_fit(model: str, counts, names):
    """Maximum likelihood by scipy.optimize on the textbook likelihoods."""
    index = {name: i for i, name in enumerate(names)}
    a = np.array([index[p[0]] for p in counts])
    b = np.array([index[p[1]] for p in counts])
    wins_a, wins_b, ties = (
        np.array(column, dtype=float) for column in zip(*counts.values(), strict=True)
    )
    k = len(names)

    def negative_loglik(x):
        pi = np.exp(x[:k])
        pa, pb = pi[a], pi[b]
        if model == "davidson":
            nu = np.exp(x[k])
            total = pa + pb + nu * np.sqrt(pa * pb)
            p_a, p_b, p_tie = pa / total, pb / total, nu * np.sqrt(pa * pb) / total
        elif model == "rao-kupper":
            theta = 1 + np.exp(x[k])
            p_a, p_b = pa / (pa + theta * pb), pb / (pb + theta * pa)
            p_tie = (theta**2 - 1) * pa * pb / ((pa + theta * pb) * (pb + theta * pa))
        else:  # thurstone, JOD: 1 unit = 75 %, ties as half a win each way
            z = (x[a] - x[b]) / (1 / norm.ppf(0.75))
            return -np.sum(
                (wins_a + ties / 2) * norm.logcdf(z) + (wins_b + ties / 2) * norm.logcdf(-z)
            )
        return -np.sum(wins_a * np.log(p_a) + wins_b * np.log(p_b) + ties * np.log(p_tie))

    size = k if model == "thurstone" else k + 1
    fit = minimize(negative_loglik, np.zeros(size), method="BFGS", options={"gtol": 1e-10})
    tie = None
    if model == "davidson":
        tie = np.exp(fit.x[k])
    elif model == "rao-kupper":
        tie = 1 + np.exp(fit.x[k])
    return centred(fit.x[:k]), tie, -fit.fun


@pytest.mark.parametrize("model", ["davidson", "rao-kupper", "thurstone"])
@pytest.mark.parametrize("seed", [0, 3])
def test_models_equal_an_independent_maximum_likelihood_fit(model, seed):
    # given
    counts = random_counts(seed)
    names = sorted({c for pair in counts for c in pair})
    # when
    result = analyse(judgments_from_counts(counts), settings=settings(model))
    expected, expected_tie, expected_loglik = plain_likelihood_fit(model, counts, names)
    # then
    ours = scores_of(result)
    np.testing.assert_allclose([ours[n] for n in names], expected, atol=1e-5, rtol=0)
    assert result.log_likelihood["quality"] == pytest.approx(expected_loglik, abs=1e-7)
    tie = result.tie_parameter["quality"]
    if expected_tie is None:
        assert tie["name"] is None and np.isnan(tie["value"])
    else:
        assert tie["name"] == {"davidson": "nu", "rao-kupper": "theta"}[model]
        assert tie["value"] == pytest.approx(expected_tie, rel=1e-5)


@pytest.mark.parametrize(("wins", "losses", "ties"), [(30, 10, 12), (7, 21, 3), (5, 5, 40)])
def test_davidson_on_two_conditions_is_the_closed_form(wins, losses, ties):
    # given: the saturated two-condition model fits the frequencies exactly
    frame = judgments_from_counts({("x", "y"): (wins, losses, ties)})
    # when
    result = analyse(frame, settings=settings("davidson"))
    # then: pi_x / pi_y = wins / losses, nu = ties / sqrt(wins * losses)
    scores = scores_of(result)
    assert scores["x"] - scores["y"] == pytest.approx(np.log(wins / losses), abs=1e-9)
    assert result.tie_parameter["quality"]["value"] == pytest.approx(
        ties / np.sqrt(wins * losses), rel=1e-9
    )


@pytest.mark.parametrize(("wins", "losses", "ties"), [(30, 10, 12), (7, 21, 3)])
def test_rao_kupper_on_two_conditions_is_the_closed_form(wins, losses, ties):
    # given: P(x) = sigma(d - k) = wins / n and P(y) = sigma(-d - k) = losses / n
    frame = judgments_from_counts({("x", "y"): (wins, losses, ties)})
    n = wins + losses + ties
    logit_x, logit_y = np.log(wins / (n - wins)), np.log(losses / (n - losses))
    # when
    result = analyse(frame, settings=settings("rao-kupper"))
    # then
    scores = scores_of(result)
    assert scores["x"] - scores["y"] == pytest.approx((logit_x - logit_y) / 2, abs=1e-9)
    theta = np.exp(-(logit_x + logit_y) / 2)
    assert result.tie_parameter["quality"]["value"] == pytest.approx(theta, rel=1e-9)


def test_thurstone_reproduces_pwcmp_s_chain_example_in_jod():
    # given: A < B < C, each neighbour preferred by 75 % (ties counted as half: 25 wins,
    # 5 losses, 10 ties is 30 : 10), the ends never compared; pwcmp's likelihood
    # (no prior) fits both neighbour pairs exactly: 1 JOD apart each
    frame = judgments_from_counts({("B", "A"): (25, 5, 10), ("C", "B"): (30, 10, 0)})
    # when
    result = analyse(frame, settings=settings("thurstone"))
    # then
    scores = scores_of(result)
    assert [scores["A"], scores["B"], scores["C"]] == pytest.approx([-1, 0, 1], abs=1e-9)


def test_a_never_losing_condition_gets_a_finite_largest_score_with_the_prior():
    # given: m0 wins or ties every judgment
    counts = random_counts(5)
    for pair in counts:
        if "m0" in pair:
            counts[pair] = (12, 0, 0) if pair[0] == "m0" else (0, 12, 0)
    frame = judgments_from_counts(counts)
    for model in MODELS:
        # when
        result = analyse(frame, settings=settings(model, prior=0.01, bootstrap=20))
        # then
        scale = result.scale
        best = scale.iloc[0]
        assert best["condition"] == "m0" and best["rank"] == 1
        assert np.isfinite(scale["score"]).all()
        assert best["score"] > scale["score"].iloc[1] + 1
        assert np.isfinite(scale[["ci95_low", "ci95_high"]].to_numpy()).all()


def test_without_a_prior_a_never_losing_condition_is_refused_by_name():
    # given
    counts = random_counts(6)
    counts[("m0", "m1")] = (9, 0, 0)
    counts[("m0", "m2")] = (4, 0, 0)
    counts[("m0", "m3")] = (5, 0, 0)
    counts[("m0", "m4")] = (2, 0, 0)
    # when / then
    for model in MODELS:
        with pytest.raises(ScaleUndefinedError, match="never lose: m0"):
            analyse(judgments_from_counts(counts), settings=settings(model))


def test_without_a_prior_ties_with_a_decisive_loser_elsewhere_keep_every_scale_finite():
    # given: m0 loses no decisive judgment, but ties with m1, which ties and loses to
    # others: the shared tie parameter cannot follow m0 off to infinity
    counts = random_counts(7)
    for pair in counts:
        if pair[0] == "m0":
            counts[pair] = (6, 0, 3) if pair[1] == "m1" else (4, 0, 0)
    names = sorted({c for pair in counts for c in pair})
    frame = judgments_from_counts(counts)
    for model in MODELS:
        # when
        scores = scores_of(analyse(frame, settings=settings(model)))
        # then
        assert np.isfinite(list(scores.values())).all()
        if model != "bradley-terry":
            expected, _, _ = plain_likelihood_fit(model, counts, names)
            np.testing.assert_allclose([scores[n] for n in names], expected, atol=1e-5)


def test_without_a_prior_the_tie_models_refuse_a_winner_that_only_ties_otherwise():
    # given: x beat y or tied, y beat z or tied, never the other way: the tie models fit
    # this ever better by spreading x, y, z apart while the tie parameter grows to keep
    # the tie probability (no pair has decisive results both ways to pin it)
    frame = judgments_from_counts({("x", "y"): (6, 0, 3), ("y", "z"): (2, 0, 2)})
    # when / then: a tie is half a loss for the half-win models: finite there
    for model in ("bradley-terry", "thurstone"):
        assert np.isfinite(analyse(frame, settings=settings(model)).scale["score"]).all()
    for model in ("davidson", "rao-kupper"):
        with pytest.raises(ScaleUndefinedError, match="never lose a decisive judgment: x"):
            analyse(frame, settings=settings(model))


def test_davidson_without_ties_is_bradley_terry_on_the_decisive_judgments():
    # given
    counts = {pair: (w_a, w_b, 0) for pair, (w_a, w_b, _) in random_counts(8).items()}
    frame = judgments_from_counts(counts)
    # when
    davidson = analyse(frame, settings=settings("davidson"))
    bradley_terry = analyse(frame, settings=settings("bradley-terry"))
    # then: nu sits at its boundary 0
    assert davidson.tie_parameter["quality"]["value"] == 0.0
    np.testing.assert_allclose(
        davidson.scale.sort_values("condition")["score"],
        bradley_terry.scale.sort_values("condition")["score"],
        atol=1e-9,
    )


def test_the_batched_fit_gives_each_count_set_its_own_fit():
    # given: three count sets fitted together and one by one
    counts = random_counts(9, conditions=4)
    pairs = list(counts)
    names = sorted({c for pair in pairs for c in pair})
    pair_a = np.array([names.index(a) for a, _ in pairs])
    pair_b = np.array([names.index(b) for _, b in pairs])
    base = (
        np.array([list(column) for column in zip(*counts.values(), strict=True)])
        .ravel()
        .astype(float)
    )
    rng = np.random.default_rng(0)
    batch = np.stack([base, base + rng.integers(0, 4, base.size), base * 2])
    for name, model in MODELS.items():
        # when
        together = fit_batch(
            model=model, counts=batch, pair_a=pair_a, pair_b=pair_b, n_conditions=4, prior=0
        )
        alone = [
            fit_batch(
                model=model, counts=row[None], pair_a=pair_a, pair_b=pair_b, n_conditions=4, prior=0
            )
            for row in batch
        ]
        # then
        for i, single in enumerate(alone):
            np.testing.assert_allclose(
                together.scores[i], single.scores[0], atol=1e-9, err_msg=name
            )
        assert together.converged.all()


@pytest.mark.parametrize("name", list(MODELS))
def test_a_batch_of_hard_count_sets_converges_each_to_its_own_optimum(name):
    # given: 40 count sets on 6 conditions, sparse and lopsided (many zero cells, some
    # pairs unobserved), fitted together with the default prior from a poor start
    rng = np.random.default_rng(11)
    pair_a, pair_b = np.triu_indices(6, 1)
    counts = rng.poisson(rng.choice([0.3, 3.0, 30.0], size=(40, 3 * pair_a.size)))
    counts[:, -pair_a.size :] //= 3  # fewer ties than decisive judgments
    counts = counts.astype(float)
    model = MODELS[name]
    structure = {"model": model, "pair_a": pair_a, "pair_b": pair_b, "n_conditions": 6}
    # when
    together = fit_batch(counts=counts, prior=0.01, start_scores=np.arange(6.0), **structure)
    # then: each equals its own fit, and the penalised gradient vanishes there
    assert together.converged.all()
    for i in range(40):
        alone = fit_batch(counts=counts[i][None], prior=0.01, **structure)
        np.testing.assert_allclose(together.scores[i], alone.scores[0], atol=1e-7)
    from quality.stats.preference.fit import _Problem

    problem = _Problem(model, counts, pair_a, pair_b, 6, 0.01)
    terms, _ = problem.terms(
        problem.counts, together.scores, np.nan_to_num(together.tie_internal), derivatives=True
    )
    gradient = terms.d @ problem.incidence - 0.01 * together.scores
    assert np.abs(gradient).max() < 1e-6
