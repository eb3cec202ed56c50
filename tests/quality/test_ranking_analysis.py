"""``analyse``: the tables and the summary, against choix, brute force, scipy and hand."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from quality.commands.io import json_ready
from quality.stats.ranking import (
    CONSENSUS_COLUMNS,
    EXCLUSION_COLUMNS,
    RANK_DISTRIBUTION_COLUMNS,
    RANKING_VERSION,
    RankingsError,
    RankingSettings,
    analyse,
    rater_bootstrap_weights,
)
from quality.stats.ranking.question import _stream

choix = pytest.importorskip("choix")


def synthetic_rankings(
    *,
    n_conditions: int = 6,
    n_raters: int = 10,
    n_prompts: int = 4,
    random_raters: int = 0,
    questions: tuple[str, ...] = ("overall",),
    tie_share: float = 0.0,
    seed: int = 0,
) -> pd.DataFrame:
    """Plackett-Luce rankings around a common order (conditions m0 best), from raters
    h0.., plus raters x0.. who rank at random; a share of adjacent pairs tied."""
    rng = np.random.default_rng(seed)
    truth = np.linspace(1.5, -1.5, n_conditions)
    raters = [f"h{k}" for k in range(n_raters)] + [f"x{k}" for k in range(random_raters)]
    rows = []
    for question in questions:
        for rater in raters:
            for p in range(n_prompts):
                noise = rng.gumbel(size=n_conditions)
                order = np.argsort(-(noise if rater.startswith("x") else truth + noise))
                text = f"m{order[0]}"
                for c in order[1:]:
                    text += ("=" if rng.random() < tie_share else ">") + f"m{c}"
                rows.append((rater, question, f"p{p}", text))
    return pd.DataFrame(rows, columns=["rater_id", "question", "prompt_id", "ranking"])


def levels(rankings: pd.DataFrame, conditions: list[str]) -> np.ndarray:
    """Tie levels written independently of the package: count the '>' before each id."""
    out = []
    for text in rankings["ranking"]:
        level = {}
        for g, group in enumerate(text.split(">")):
            for condition in group.split("="):
                level[condition] = g
        out.append([level[c] for c in conditions])
    return np.array(out)


def choix_centred(level: np.ndarray, repeat=None) -> np.ndarray:
    data = [tuple(np.argsort(row).tolist()) for row in level]
    if repeat is not None:
        data = [d for d, times in zip(data, repeat, strict=True) for _ in range(int(times))]
    params = choix.ilsr_rankings(level.shape[1], data, alpha=0.0, tol=1e-13, max_iter=10_000)
    return params - params.mean()


CONDITIONS = [f"m{c}" for c in range(6)]
FAST = RankingSettings(bootstrap=30, screen=False)


def block(result, prompt: str, question: str = "overall") -> pd.DataFrame:
    rows = result.consensus[
        (result.consensus["question"] == question) & (result.consensus["prompt_id"] == prompt)
    ]
    return rows.set_index("condition").loc[CONDITIONS]


def test_consensus_has_a_block_per_prompt_and_the_pooled_one_best_first():
    # given
    rankings = synthetic_rankings(questions=("overall", "motion"))
    # when
    result = analyse(rankings, settings=FAST)
    # then
    consensus = result.consensus
    assert tuple(consensus.columns) == CONSENSUS_COLUMNS
    assert result.questions == ["overall", "motion"]
    for question in ("overall", "motion"):
        part = consensus[consensus["question"] == question]
        assert part["prompt_id"].unique().tolist() == ["p0", "p1", "p2", "p3", "*"]
        for _, rows in part.groupby("prompt_id"):
            assert rows["kemeny_rank"].tolist() == [1, 2, 3, 4, 5, 6]
            assert sorted(rows["condition"]) == CONDITIONS


def test_strengths_equal_choix_per_prompt_and_pooled():
    # given
    rankings = synthetic_rankings(seed=1)
    # when
    result = analyse(rankings, settings=FAST)
    # then
    for prompt in ("p0", "p3", "*"):
        chosen = rankings if prompt == "*" else rankings[rankings["prompt_id"] == prompt]
        expected = choix_centred(levels(chosen, CONDITIONS))
        np.testing.assert_allclose(block(result, prompt)["pl_strength"], expected, atol=1e-6)


def test_intervals_are_percentiles_of_choix_on_the_drawn_raters():
    # given: 20 replicates; the draws of the pooled ranking, redrawn from its stream
    rankings = synthetic_rankings(n_raters=8, seed=2)
    settings = RankingSettings(bootstrap=20, seed=4, screen=False)
    raters = sorted(rankings["rater_id"].unique())
    weights = rater_bootstrap_weights(
        n_raters=len(raters), replicates=20, rng=_stream("overall", "*", 4)
    )
    # when
    result = analyse(rankings, settings=settings)
    # then
    level = levels(rankings, CONDITIONS)
    rater_index = rankings["rater_id"].map({r: k for k, r in enumerate(raters)}).to_numpy()
    replicates = np.array([choix_centred(level, repeat=w[rater_index]) for w in weights])
    low, high = np.percentile(replicates, [2.5, 97.5], axis=0)
    pooled = block(result, "*")
    np.testing.assert_allclose(pooled["pl_ci95_low"], low, atol=1e-6)
    np.testing.assert_allclose(pooled["pl_ci95_high"], high, atol=1e-6)


def brute_force_orders(level: np.ndarray) -> list[tuple[int, ...]]:
    n = level.shape[1]
    best, optima = np.inf, []
    for order in itertools.permutations(range(n)):
        place = np.argsort(order)
        cost = 0
        for i, j in itertools.combinations(range(n), 2):
            if place[i] < place[j]:  # the order puts i first: rankings with j above i disagree
                cost += int((level[:, j] < level[:, i]).sum())
            else:
                cost += int((level[:, i] < level[:, j]).sum())
        if cost < best:
            best, optima = cost, [order]
        elif cost == best:
            optima.append(order)
    return optima


def test_kemeny_ranks_equal_brute_force_per_prompt_and_pooled():
    # given: ties included
    rankings = synthetic_rankings(n_raters=5, tie_share=0.2, seed=3)
    # when
    result = analyse(rankings, settings=FAST)
    summary = result.summary_dict()
    # then
    for prompt in ("p0", "p1", "*"):
        chosen = rankings if prompt == "*" else rankings[rankings["prompt_id"] == prompt]
        optima = brute_force_orders(levels(chosen, CONDITIONS))
        found = tuple(np.argsort(block(result, prompt)["kemeny_rank"].to_numpy()))
        assert found in optima
        assert summary["kemeny"]["overall"][prompt]["n_optimal"] == len(optima)
        assert set(block(result, prompt)["kemeny_unique"]) == {len(optima) == 1}


def test_the_consensus_says_where_another_kemeny_order_is_as_close():
    # given: p1 split between a>b>c and b>a>c (two optimal orders); p2 agreed
    rankings = pd.DataFrame(
        [("r1", "q", "p1", "a>b>c"), ("r2", "q", "p1", "b>a>c"),
         ("r1", "q", "p2", "a>b>c"), ("r2", "q", "p2", "a>b>c")],
        columns=["rater_id", "question", "prompt_id", "ranking"],
    )  # fmt: skip
    # when
    consensus = analyse(rankings, settings=FAST).consensus
    # then
    unique = consensus.groupby("prompt_id")["kemeny_unique"].agg(set).to_dict()
    assert unique == {"p1": {False}, "p2": {True}, "*": {True}}


def test_borda_per_prompt_is_the_mean_of_points_and_pooled_the_mean_of_prompts():
    # given: p1 ranked a>b=c twice, p2 ranked c>b>a once
    rankings = pd.DataFrame(
        [("r1", "q", "p1", "a>b=c"), ("r2", "q", "p1", "a>b=c"), ("r1", "q", "p2", "c>b>a")],
        columns=["rater_id", "question", "prompt_id", "ranking"],
    )
    # when
    result = analyse(rankings, settings=FAST)
    # then: points a 2, b 0.5, c 0.5 on p1; a 0, b 1, c 2 on p2
    borda = result.consensus.set_index(["prompt_id", "condition"])["borda"]
    assert borda["p1"].to_dict() == {"a": 2.0, "b": 0.5, "c": 0.5}
    assert borda["p2"].to_dict() == {"c": 2.0, "b": 1.0, "a": 0.0}
    assert borda["*"].to_dict() == {"a": 1.0, "b": 0.75, "c": 1.25}


def test_kendall_w_per_prompt_is_scipys_friedman_over_m_n_minus_1():
    rankings = synthetic_rankings(tie_share=0.1, seed=5)
    summary = analyse(rankings, settings=FAST).summary_dict()
    for prompt in ("p2", "*"):
        chosen = rankings if prompt == "*" else rankings[rankings["prompt_id"] == prompt]
        level = levels(chosen, CONDITIONS)
        friedman = stats.friedmanchisquare(*level.T)
        found = summary["kendall_w"]["overall"][prompt]
        assert found["w"] == pytest.approx(friedman.statistic / (len(level) * 5))
        assert found["p_value"] == pytest.approx(friedman.pvalue)


def test_screening_excludes_random_raters_and_records_why():
    # given: 10 consistent raters and 2 random ones, 6 prompts of 6 conditions
    rankings = synthetic_rankings(n_prompts=6, random_raters=2, seed=3)
    # when
    screened = analyse(rankings, settings=RankingSettings(bootstrap=10))
    unscreened = analyse(rankings, settings=RankingSettings(bootstrap=10, screen=False))
    # then
    exclusions = screened.exclusions
    assert tuple(exclusions.columns) == EXCLUSION_COLUMNS
    assert exclusions["rater_id"].tolist() == ["x0", "x1"]
    assert set(exclusions["rule"]) == {"mean_tau_loo_not_above_0"}
    assert (exclusions["p_value"] >= 0.05).all() and (exclusions["n_prompts"] == 6).all()
    assert screened.counts["overall"]["raters_kept"] == 10
    kept = rankings[~rankings["rater_id"].str.startswith("x")]
    np.testing.assert_allclose(
        block(screened, "*")["pl_strength"], choix_centred(levels(kept, CONDITIONS)), atol=1e-6
    )
    assert unscreened.exclusions.empty
    flagged = unscreened.rater_taus.set_index("rater_id")["flagged"]
    assert flagged[["x0", "x1"]].all() and not flagged.drop(["x0", "x1"]).any()


def test_screening_that_would_exclude_everyone_excludes_nobody():
    # given: two raters who always disagree completely
    rows = []
    for p in range(8):
        rows += [("a", "q", f"p{p}", "m0>m1>m2>m3>m4>m5"), ("b", "q", f"p{p}", "m5>m4>m3>m2>m1>m0")]
    rankings = pd.DataFrame(rows, columns=["rater_id", "question", "prompt_id", "ranking"])
    # when
    result = analyse(rankings, settings=RankingSettings(bootstrap=5))
    # then
    assert result.exclusions.empty
    assert result.rater_taus["flagged"].all()
    assert "nobody was excluded" in result.summary_dict()["screening_notes"]["q"]


def test_a_prompt_only_excluded_raters_ranked_is_dropped():
    rankings = synthetic_rankings(n_prompts=6, random_raters=2, seed=3)
    extra = pd.DataFrame(
        [("x0", "overall", "lonely", "m0>m1>m2>m3>m4>m5")], columns=rankings.columns
    )
    result = analyse(pd.concat([rankings, extra]), settings=RankingSettings(bootstrap=5))
    assert result.dropped_prompts == {"overall": ["lonely"]}
    assert "lonely" not in set(result.consensus["prompt_id"])


def test_against_a_model_ranking():
    # given: everyone ranks m0>m1>...>m5; the model's order is m1, m0, m3, m2, m5, m4
    rows = [(f"r{k}", "q", "p", "m0>m1>m2>m3>m4>m5") for k in range(4)]
    rows.append(("r4", "q", "p", "m0=m1>m2>m3>m4>m5"))
    rankings = pd.DataFrame(rows, columns=["rater_id", "question", "prompt_id", "ranking"])
    model = {"m0": 5.0, "m1": 6.0, "m2": 3.0, "m3": 4.0, "m4": 1.0, "m5": 2.0, "extra": 9.0}
    # when
    summary = analyse(rankings, settings=FAST, model_scores=model).summary_dict()
    # then: top1 {m0} vs {m1}; top3 {m0,m1,m2} vs {m1,m0,m3}; top5 misses m4 vs m5
    assert summary["recall_at"] == {"q": {"1": 0.0, "3": 2 / 3, "5": 4 / 5}}
    per_rater = summary["recall_at_per_rater"]["q"]
    # r4's tie puts m1 in its top 1 half the time: recall@1 = 0.5 for r4, 0 for the others
    assert per_rater["1"]["mean"] == pytest.approx(0.5 / 5)
    assert per_rater["1"]["n_raters"] == 5
    assert 0.0 <= per_rater["1"]["ci95_low"] <= per_rater["1"]["ci95_high"] <= 0.5
    assert per_rater["3"]["mean"] == pytest.approx(2 / 3)
    human, scores = np.arange(6), np.array([5.0, 6.0, 3.0, 4.0, 1.0, 2.0])
    correlation = summary["model_correlation"]["q"]
    assert correlation["kendall_tau"] == pytest.approx(stats.kendalltau(-human, scores)[0])
    assert correlation["spearman_rho"] == pytest.approx(stats.spearmanr(-human, scores)[0])


def test_recall_skips_k_above_the_number_of_conditions():
    rankings = synthetic_rankings(n_conditions=4, n_raters=3, n_prompts=1)
    model = {f"m{c}": float(-c) for c in range(4)}
    summary = analyse(rankings, settings=FAST, model_scores=model).summary_dict()
    assert set(summary["recall_at"]["overall"]) == {"1", "3"}


def test_model_scores_must_cover_every_condition():
    rankings = synthetic_rankings(n_raters=2, n_prompts=1)
    with pytest.raises(RankingsError, match="miss condition\\(s\\) 'm5' of question 'overall'"):
        analyse(rankings, settings=FAST, model_scores={f"m{c}": 1.0 for c in range(5)})


def test_row_order_does_not_change_any_result():
    rankings = synthetic_rankings(random_raters=1, tie_share=0.1, seed=8)
    shuffled = rankings.sample(frac=1.0, random_state=1)
    model = {c: float(i % 3) for i, c in enumerate(CONDITIONS)}
    one = analyse(rankings, settings=RankingSettings(bootstrap=15), model_scores=model)
    two = analyse(shuffled, settings=RankingSettings(bootstrap=15), model_scores=model)
    pd.testing.assert_frame_equal(one.consensus, two.consensus)
    assert json.dumps(json_ready(one.summary_dict())) == json.dumps(json_ready(two.summary_dict()))


def test_summary_is_json_with_version_settings_and_every_section():
    # given
    rankings = synthetic_rankings(random_raters=1)
    # when
    summary = json_ready(
        analyse(rankings, settings=FAST, model_scores={c: 1.0 for c in CONDITIONS}).summary_dict()
    )
    # then
    text = json.dumps(summary, allow_nan=False)
    assert json.loads(text)["version"] == RANKING_VERSION
    assert summary["settings"] == {
        "bootstrap": 30,
        "seed": 0,
        "screen": False,
        "screen_alpha": 0.05,
        "pl_prior_weight": 0.5,
        "recall_ks": [1, 3, 5],
    }
    assert {
        "questions",
        "counts",
        "kendall_w",
        "kemeny",
        "plackett_luce",
        "rater_taus",
        "exclusions",
        "screening_notes",
        "dropped_prompts",
        "recall_at",
        "recall_at_per_rater",
        "model_correlation",
    } <= set(summary)
    assert set(summary["kendall_w"]["overall"]) == {"p0", "p1", "p2", "p3", "*"}
    assert set(summary["rater_taus"]["overall"]["x0"]) == {
        "mean_tau",
        "n_prompts",
        "z",
        "p_value",
        "testable",
        "flagged",
    }


def test_without_model_scores_the_model_sections_are_null():
    summary = analyse(synthetic_rankings(n_raters=3), settings=FAST).summary_dict()
    assert summary["recall_at"] is None and summary["model_correlation"] is None


def test_rank_distribution_counts_places_of_the_kept_rankings():
    rankings = synthetic_rankings(tie_share=0.2, seed=6)
    result = analyse(rankings, settings=FAST)
    table = result.rank_distribution
    assert tuple(table.columns) == RANK_DISTRIBUTION_COLUMNS
    assert len(table) == 36
    assert table.groupby("condition")["count"].sum().tolist() == pytest.approx([40.0] * 6)
    assert table.groupby("place")["count"].sum().tolist() == pytest.approx([40.0] * 6)
    first = table[table["place"] == 1].set_index("condition")["count"]
    level = levels(rankings, CONDITIONS)
    on_top = (level == 0) / (level == 0).sum(axis=1, keepdims=True)
    assert first[CONDITIONS].tolist() == pytest.approx(on_top.sum(axis=0).tolist())


def test_no_bootstrap_gives_no_intervals():
    result = analyse(synthetic_rankings(n_raters=3), settings=RankingSettings(bootstrap=0))
    assert result.consensus["pl_ci95_low"].isna().all()
    assert result.consensus["pl_strength"].notna().all()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (RankingSettings(bootstrap=-1), "bootstrap"),
        (RankingSettings(screen_alpha=1.0), "screen_alpha"),
        (RankingSettings(pl_prior_weight=-0.5), "pl_prior_weight"),
        (RankingSettings(recall_ks=(0,)), "recall_ks"),
    ],
)
def test_bad_settings_are_refused(options, message):
    with pytest.raises(RankingsError, match=message):
        analyse(synthetic_rankings(n_raters=2, n_prompts=1), settings=options)
