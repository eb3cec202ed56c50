"""The verify stage: kept labels against crowd-kit's BinaryRelevance(MajorityVote), alpha
against the krippendorff package, verifier accuracy by brute force, errors naming lines."""

import re
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest

from quality.stats.verify import VERDICT_COLUMNS, LabelsError, verify_labels


def verdicts_frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))


def random_verdicts(*, items: int, seed: int) -> pd.DataFrame:
    """3 verifiers per item (of 12), each judging every label proposed for the item."""
    rng = np.random.default_rng(seed)
    vocabulary = ["cat", "dog", "car", "tree", "sky", "rain"]
    rows = []
    for i in range(items):
        proposed = rng.choice(vocabulary, size=rng.integers(1, 5), replace=False)
        true = {label for label in proposed if rng.random() < 0.6}
        for verifier in rng.choice(12, size=3, replace=False):
            skill = 0.6 + 0.03 * verifier
            for label in proposed:
                right = rng.random() < skill
                says_yes = (label in true) == right
                rows.append(
                    (f"u{verifier:02d}", f"v{i:03d}", str(label), "yes" if says_yes else "no")
                )
    return verdicts_frame(rows).sample(frac=1.0, random_state=seed)


def test_counts_and_the_two_of_three_rule():
    # given
    rows = [
        ("a", "v1", "cat", "yes"),
        ("b", "v1", "cat", "Yes"),
        ("c", "v1", "cat", "no"),
        ("a", "v1", "dog", "yes"),
        ("b", "v1", "dog", "no"),
        ("c", "v1", "dog", "NO"),
    ]
    # when
    result = verify_labels(verdicts=verdicts_frame(rows))
    # then
    assert result.labels.values.tolist() == [["v1", "cat", 2, 1, True], ["v1", "dog", 1, 2, False]]
    assert result.verifiers.values.tolist() == [
        ["a", 2, 1, 0.5],  # yes on dog, which was dropped
        ["b", 2, 2, 1.0],
        ["c", 2, 1, 0.5],  # no on cat, which was kept
    ]
    # when: keep = 1 (any yes keeps the label)
    loose = verify_labels(verdicts_frame(rows), keep=1)
    # then
    assert loose.labels["kept"].tolist() == [True, True]
    assert loose.summary_dict()["settings"] == {"keep": 1}


@pytest.mark.parametrize("seed", [1, 2])
def test_kept_labels_equal_crowdkit_binary_relevance_over_majority_vote(seed):
    from crowdkit.aggregation import BinaryRelevance, MajorityVote

    # given
    verdicts = random_verdicts(items=120, seed=seed)
    # when
    result = verify_labels(verdicts=verdicts, keep=2)
    # then: crowd-kit gets each verifier's list of accepted labels per item
    accepted = (
        verdicts.assign(yes=verdicts["verdict"] == "yes")
        .groupby(["item_id", "rater_id"])
        .apply(lambda g: sorted(g.loc[g["yes"], "label"]), include_groups=False)
        .rename("label")
        .reset_index()
        .rename(columns={"item_id": "task", "rater_id": "worker"})
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = BinaryRelevance(MajorityVote()).fit_predict(accepted)
    kept = result.labels[result.labels["kept"]].groupby("item_id")["label"].agg(sorted)
    ours = {item: kept.get(item, []) for item in expected.index}
    assert ours == {item: sorted(labels) for item, labels in expected.items()}
    assert 50 < result.labels["kept"].sum() < len(result.labels)


def test_alpha_equals_the_package_and_accuracy_a_brute_force_count():
    # given
    verdicts = random_verdicts(items=80, seed=3)
    # when
    result = verify_labels(verdicts=verdicts)
    # then: nominal alpha with one unit per (item, label)
    units = sorted(set(zip(verdicts["item_id"], verdicts["label"], strict=True)))
    raters = sorted(set(verdicts["rater_id"]))
    matrix = np.full((len(raters), len(units)), np.nan)
    for rater, item, label, verdict in verdicts.itertuples(index=False):
        matrix[raters.index(rater), units.index((item, label))] = verdict == "yes"
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert result.alpha == pytest.approx(expected, abs=1e-12)
    # then: accuracy = share of a verifier's verdicts equal to the final label
    kept = {(r.item_id, r.label): r.kept for r in result.labels.itertuples(index=False)}
    for row in result.verifiers.itertuples(index=False):
        mine = verdicts[verdicts["rater_id"] == row.rater_id]
        agreed = sum(
            (v == "yes") == kept[(i, lab)]
            for i, lab, v in zip(mine["item_id"], mine["label"], mine["verdict"], strict=True)
        )
        assert (row.verdicts, row.agreed) == (len(mine), agreed)
        assert row.accuracy == agreed / len(mine)
    summary = result.summary_dict()
    assert summary["version"] == "quality.stats.verify/1"
    assert summary["counts"]["kept"] == int(result.labels["kept"].sum())


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "no verdicts"),
        ([("a", "v", "cat", "yes"), ("a", "v", "dog", "maybe")], "line 3: verdict 'maybe'"),
        ([("a", "v", "cat", "")], "line 2: verdict '' is not yes or no"),
        ([("a", "v", "", "yes")], "line 2: label is empty"),
        (
            [("a", "v", "cat", "yes"), ("b", "v", "cat", "no"), ("a", "v", "cat", "no")],
            "line 4: verifier 'a' judged label 'cat' of item 'v' again (first on line 2)",
        ),
    ],
)
def test_unusable_verdicts_raise_naming_the_line(rows, message):
    with pytest.raises(LabelsError, match="^" + re.escape(message)):
        verify_labels(verdicts=verdicts_frame(rows))


def test_keep_must_be_at_least_one():
    with pytest.raises(LabelsError, match="keep"):
        verify_labels(verdicts=verdicts_frame([("a", "v", "cat", "yes")]), keep=0)
