"""The exact Kemeny consensus against a brute-force search over all N! orders."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from quality.stats.ranking import (
    kemeny_consensus,
    kemeny_orders,
    pairwise_wins,
    tied_pairs,
)


def kendall_distance(order: tuple[int, ...], ranking: np.ndarray) -> float:
    """K^(1/2) distance of a strict order to one ranking given as tie levels, pair by pair."""
    place = {condition: p for p, condition in enumerate(order)}
    distance = 0.0
    for i, j in itertools.combinations(range(len(ranking)), 2):
        if ranking[i] == ranking[j]:
            distance += 0.5
        elif (ranking[i] < ranking[j]) != (place[i] < place[j]):
            distance += 1.0
    return distance


def brute_force(level: np.ndarray) -> tuple[float, list[tuple[int, ...]]]:
    """The least total distance and every order attaining it: every order's distance to
    every ranking, pair by pair (vectorised over the orders)."""
    n = level.shape[1]
    orders = np.array(list(itertools.permutations(range(n))))
    place = np.argsort(orders, axis=1)  # place[o, c]: where order o puts condition c
    i, j = np.array(list(itertools.combinations(range(n), 2))).T
    order_sign = np.sign(place[:, i] - place[:, j])  # (orders, pairs)
    totals = np.zeros(len(orders))
    for ranking in level:
        ranking_sign = np.sign(ranking[i] - ranking[j])
        totals += np.where(ranking_sign == 0, 0.5, (order_sign != ranking_sign) * 1.0).sum(1)
    best = totals.min()
    return float(best), [tuple(int(c) for c in orders[k]) for k in np.flatnonzero(totals == best)]


def random_rankings(rng: np.random.Generator, n: int, m: int, ties: bool) -> np.ndarray:
    if ties:
        return rng.integers(0, max(1, n - 1), size=(m, n))
    return np.argsort(rng.random((m, n)), axis=1)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("ties", [False, True])
def test_kemeny_equals_brute_force_on_random_rankings(n, ties):
    rng = np.random.default_rng(100 * n + ties)
    for _ in range(6 if n == 7 else 25):
        # given
        level = random_rankings(rng, n, m=int(rng.integers(1, 9)), ties=ties)
        # when
        found = kemeny_consensus(wins=pairwise_wins(level), ties=tied_pairs(level))
        # then
        best, optima = brute_force(level)
        assert found.distance == best
        assert found.order in optima
        assert found.n_optimal == len(optima)
        assert sum(kendall_distance(found.order, r) for r in level) == best
        if len(optima) > 1:
            assert found.alternative in optima and found.alternative != found.order
        else:
            assert found.alternative is None and found.unique


def test_the_preference_picks_among_optima_the_first_order_it_allows():
    # given: a>b>c and c>b>a, so each pair is won once each way and all 3! orders are
    # optimal (each pair costs 1)
    level = np.array([[0, 1, 2], [2, 1, 0]])
    best, optima = brute_force(level)
    # when: prefer c, then a, then b
    found = kemeny_consensus(wins=pairwise_wins(level), preference=np.array([1, 2, 0]))
    # then: the lexicographically first optimal order under that preference
    key = {2: 0, 0: 1, 1: 2}
    assert found.order == min(optima, key=lambda order: [key[c] for c in order])
    assert found.n_optimal == len(optima) == 6 and best == 3.0


def test_rank_is_the_place_of_each_condition():
    # given: everyone ranks c > a > b
    level = np.array([[1, 2, 0]] * 3)
    # when
    found = kemeny_consensus(wins=pairwise_wins(level))
    # then
    assert found.order == (2, 0, 1)
    assert found.rank.tolist() == [2, 3, 1]
    assert found.distance == 0.0 and found.unique


def test_weighted_wins_count_rankings_that_many_times():
    rng = np.random.default_rng(3)
    level = random_rankings(rng, 5, m=6, ties=True)
    weights = np.array([2.0, 0.0, 1.0, 3.0, 1.0, 0.0])
    repeated = np.repeat(level, weights.astype(int), axis=0)
    np.testing.assert_array_equal(pairwise_wins(level, weights=weights), pairwise_wins(repeated))
    assert tied_pairs(level, weights=weights) == tied_pairs(repeated)


def test_batched_orders_equal_one_by_one():
    # given: 40 random problems of 6 conditions with their own preferences
    rng = np.random.default_rng(8)
    wins = np.stack([pairwise_wins(random_rankings(rng, 6, 4, ties=True)) for _ in range(40)])
    preference = np.argsort(rng.random((40, 6)), axis=1)
    # when
    orders = kemeny_orders(wins=wins, preference=preference)
    # then
    for k in range(40):
        one = kemeny_consensus(wins=wins[k], preference=preference[k])
        assert tuple(orders[k]) == one.order


def test_kemeny_equals_brute_force_on_eight_conditions():
    rng = np.random.default_rng(88)
    for ties in (False, True):
        level = random_rankings(rng, 8, m=5, ties=ties)
        best, optima = brute_force(level)
        found = kemeny_consensus(wins=pairwise_wins(level), ties=tied_pairs(level))
        assert found.distance == best and found.order in optima
        assert found.n_optimal == len(optima)
