"""The propose stage's recall on golden items against a brute-force enumeration of every
group of k proposers."""

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest

from quality.stats.verify import LabelsError, proposal_recall


def brute_force_curve(proposals: pd.DataFrame, truth: pd.DataFrame) -> dict[int, float]:
    """Mean over golden labels of the share of k-groups of the item's proposers whose
    union names the label, by listing every group."""
    golden = truth.groupby("item_id")["label"].agg(set).to_dict()
    named = {}
    for rater, item, label in proposals.itertuples(index=False):
        if item in golden:
            named.setdefault(item, {}).setdefault(rater, set())
            if label:
                named[item][rater].add(label)
    curve = {}
    for k in range(1, max(len(by) for by in named.values()) + 1):
        shares = []
        for item, labels in golden.items():
            by = named.get(item, {})
            if len(by) < k:
                continue
            groups = list(itertools.combinations(by.values(), k))
            for label in labels:
                shares.append(sum(label in set().union(*g) for g in groups) / len(groups))
        curve[k] = sum(shares) / len(shares)
    return curve


def random_study(*, items: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    vocabulary = [f"l{j}" for j in range(12)]
    truth, proposals = [], []
    for i in range(items):
        item = f"v{i:03d}"
        golden = rng.choice(vocabulary, size=rng.integers(1, 5), replace=False)
        truth += [(item, str(label)) for label in golden]
        for rater in rng.choice(8, size=rng.integers(1, 5), replace=False):
            named = [str(g) for g in golden if rng.random() < 0.3 + 0.08 * rater]
            named += [str(rng.choice(vocabulary))] if rng.random() < 0.3 else []
            for label in sorted(set(named)) or [""]:  # "" = proposed nothing
                proposals.append((f"p{rater}", item, label))
    proposals.append(("p9", "not-golden", "l1"))  # ignored: no golden labels
    return (
        pd.DataFrame(proposals, columns=["rater_id", "item_id", "label"]),
        pd.DataFrame(truth, columns=["item_id", "label"]),
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_recall_curve_equals_a_brute_force_over_every_group(seed):
    # given
    proposals, truth = random_study(items=60, seed=seed)
    # when
    result = proposal_recall(proposals=proposals, truth=truth)
    # then
    expected = brute_force_curve(proposals, truth)
    assert result.curve.keys() == expected.keys()
    for k, value in expected.items():
        assert result.curve[k] == pytest.approx(value, abs=1e-12)


def test_worked_example_and_per_proposer_recall():
    # given: item A has golden {x, y}; three proposers name {x}, {x, y}, {} (nothing)
    proposals = pd.DataFrame(
        [("p1", "A", "x"), ("p2", "A", "x"), ("p2", "A", "y"), ("p3", "A", ""), ("p1", "B", "z")],
        columns=["rater_id", "item_id", "label"],
    )
    truth = pd.DataFrame([("A", "x"), ("A", "y"), ("B", "w")], columns=["item_id", "label"])
    # when
    result = proposal_recall(proposals=proposals, truth=truth)
    # then: k=1 A: x found by 2 of 3, y by 1 of 3; B (one proposer): w never
    #       k=2 A: x missed only by {p3}... every pair contains p1 or p2 -> 1; y: 2 of 3 pairs
    #       k=3 A: x and y found
    assert result.curve[1] == pytest.approx((2 / 3 + 1 / 3 + 0) / 3)
    assert result.curve[2] == pytest.approx((1 + 2 / 3) / 2)
    assert result.curve[3] == pytest.approx(1.0)
    assert result.curve_labels == {1: 3, 2: 2, 3: 2}
    assert result.proposers.values.tolist() == [
        ["p1", 2, 3, 1, 1 / 3],
        ["p2", 1, 2, 2, 1.0],
        ["p3", 1, 2, 0, 0.0],
    ]
    summary = result.summary_dict()
    assert summary["curve"]["1"] == result.curve[1]
    assert summary["counts"] == {
        "golden_items": 2,
        "golden_labels": 3,
        "golden_items_without_proposals": 0,
    }


def test_golden_items_nobody_worked_on_are_counted_and_left_out():
    proposals = pd.DataFrame([("p1", "A", "x")], columns=["rater_id", "item_id", "label"])
    truth = pd.DataFrame([("A", "x"), ("C", "x")], columns=["item_id", "label"])
    result = proposal_recall(proposals=proposals, truth=truth)
    assert result.curve == {1: 1.0}
    assert result.n_items_without_proposals == 1 and result.n_golden_labels == 1


@pytest.mark.parametrize(
    ("proposals", "truth", "message"),
    [
        ([], [("A", "x")], "proposals: no proposals"),
        ([("p", "A", "x")], [("A", "")], "golden labels: line 2: label is empty"),
        ([("p", "", "x")], [("A", "x")], "proposals: line 2: item_id is empty"),
        ([("p", "A", "x"), ("p", "A", "x")], [("A", "x")], "proposals: line 3 repeats line 2"),
        ([("p", "A", "x")], [("A", "x"), ("A", "x")], "golden labels: line 3 repeats line 2"),
    ],
)
def test_unusable_tables_raise_naming_table_and_line(proposals, truth, message):
    with pytest.raises(LabelsError, match="^" + re.escape(message)):
        proposal_recall(
            proposals=pd.DataFrame(proposals, columns=["rater_id", "item_id", "label"]),
            truth=pd.DataFrame(truth, columns=["item_id", "label"]),
        )


def test_closed_form_of_one_label():
    # given: m proposers, h of them name the label: 1 - C(m - h, k) / C(m, k)
    m, h = 5, 2
    proposals = pd.DataFrame(
        [(f"p{r}", "A", "x" if r < h else "") for r in range(m)],
        columns=["rater_id", "item_id", "label"],
    )
    truth = pd.DataFrame([("A", "x")], columns=["item_id", "label"])
    # when
    curve = proposal_recall(proposals=proposals, truth=truth).curve
    # then
    assert curve == pytest.approx(
        {k: 1 - math.comb(m - h, k) / math.comb(m, k) for k in (1, 2, 3, 4, 5)}
    )
