"""Labels by counting: worked examples of the rules, and crowd-kit's MajorityVote /
BinaryRelevance(MajorityVote) and pandas as oracles on random questionnaires."""

import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from quality.stats.labels import ANSWER_COLUMNS, LabelSettings, analyse


def frame(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(ANSWER_COLUMNS))


def labels_of(rows, **settings) -> pd.DataFrame:
    return analyse(answers=frame(rows), settings=LabelSettings(**settings)).labels


def tags_unit(answers: list[str], item: str = "v") -> list[tuple]:
    return [(f"r{i}", item, "style", "tags", a) for i, a in enumerate(answers)]


def ordinal_unit(answers: list[str], item: str = "v") -> list[tuple]:
    return [(f"r{i}", item, "motion", "ordinal", a) for i, a in enumerate(answers)]


@pytest.mark.parametrize(
    ("answers", "keep_share", "kept"),
    [
        (["a|b", "a", ""], 0.5, "a"),  # 2 of 3 keeps a, 1 of 3 drops b
        (["a", "a", "", ""], 0.5, ""),  # 2 of 4 is not MORE than half
        (["a", "a", "a", ""], 0.5, "a"),  # 3 of 4
        (["a"], 0.5, "a"),  # 1 of 1
        (["a", ""], 0.5, ""),  # 1 of 2
        (["b|a", "a|b", "b"], 0.5, "a|b"),  # kept tags joined in name order
        (["a", "a", ""], 2 / 3, ""),  # 2 of 3 is not more than two thirds
        (["a", "", ""], 0.0, "a"),  # keep share 0: any tag someone chose
    ],
)
def test_a_tag_is_kept_when_chosen_by_more_than_keep_share_of_the_raters(answers, keep_share, kept):
    # when
    labels = labels_of(tags_unit(answers), keep_share=keep_share)
    # then
    assert labels[["value", "n", "status"]].values.tolist() == [[kept, len(answers), "ok"]]


@pytest.mark.parametrize(
    ("answers", "value", "status"),
    [
        (["2", "2", "4"], 2, "ok"),
        (["1", "2", "3"], None, "tie"),
        (["2", "invalid", "invalid"], None, "invalid"),  # 2 of 3 invalid
        (["2", "2", "invalid"], 2, "ok"),  # one abstention
        (["2", "3", "invalid"], None, "tie"),  # the two votes disagree
        (["2", "2", "invalid", "invalid"], 2, "ok"),  # 2 of 4 invalid is no majority
        (["2", "2", "3", "3"], None, "tie"),
        (["1", "1", "2", "3", "4"], 1, "ok"),  # plurality
        (["invalid"], None, "invalid"),
        (["2.5", "2.50", "1"], 2.5, "ok"),  # the same level however written
    ],
)
def test_an_ordinal_label_is_the_majority_level_unless_invalid_or_tied(answers, value, status):
    # when
    labels = labels_of(ordinal_unit(answers))
    # then
    assert labels[["value", "n", "status"]].values.tolist() == [[value, len(answers), status]]


def test_a_score_label_is_the_mean_with_the_sample_std():
    # when
    labels = labels_of(
        [
            ("a", "v", "s", "score", "3"),
            ("b", "v", "s", "score", "4"),
            ("c", "v", "s", "score", "8"),
        ]
        + [("a", "w", "s", "score", "6")]
    )
    # then
    assert labels["value"].tolist() == [5.0, 6.0]
    assert labels["std"].tolist()[0] == pytest.approx(np.sqrt(7.0))  # (4 + 1 + 9) / 2
    assert np.isnan(labels["std"].tolist()[1])
    assert labels["status"].tolist() == ["ok", "ok"]


def random_questionnaire(*, items: int, raters_per_item: int, seed: int) -> pd.DataFrame:
    """Score, ordinal (with abstentions) and tags answers from a pool of 20 raters."""
    rng = np.random.default_rng(seed)
    rows = []
    tags = ["blur", "flicker", "noir", "retro"]
    for i in range(items):
        raters = rng.choice(20, size=raters_per_item, replace=False)
        truth = rng.integers(1, 6)
        for r in raters:
            rid, iid = f"r{r:02d}", f"v{i:03d}"
            rows.append((rid, iid, "aesthetic", "score", str(rng.integers(0, 101))))
            level = truth if rng.random() < 0.6 else rng.integers(1, 6)
            answer = "invalid" if rng.random() < 0.1 else str(level)
            rows.append((rid, iid, "motion", "ordinal", answer))
            chosen = [t for t in tags if rng.random() < 0.4]
            rows.append((rid, iid, "style", "tags", "|".join(chosen)))
    return frame(rows).sample(frac=1.0, random_state=seed)  # any row order


@pytest.mark.parametrize(("raters_per_item", "seed"), [(3, 1), (5, 2)])
def test_ordinal_labels_equal_crowdkit_majority_vote_where_there_is_a_strict_winner(
    raters_per_item, seed
):
    from crowdkit.aggregation import MajorityVote

    # given
    answers = random_questionnaire(items=150, raters_per_item=raters_per_item, seed=seed)
    ordinal = answers[answers["kind"] == "ordinal"]
    # when
    labels = analyse(answers=answers, settings=LabelSettings()).labels
    ours = labels[labels["question"] == "motion"].set_index("item_id")
    # then: status by brute force (Counter per item)
    for item, group in ordinal.groupby("item_id"):
        votes = Counter(group["answer"])
        invalid = votes.pop("invalid", 0)
        top = sorted(votes.values(), reverse=True)
        expected = (
            "invalid"
            if 2 * invalid > len(group)
            else ("tie" if len(top) > 1 and top[0] == top[1] else "ok")
        )
        assert ours.loc[item, "status"] == expected, item
    # then: the level equals crowd-kit's majority vote on the tie-free, valid items
    ok = ours[ours["status"] == "ok"]
    assert len(ok) > 100
    votes = ordinal[(ordinal["answer"] != "invalid") & ordinal["item_id"].isin(ok.index)]
    data = pd.DataFrame(
        {
            "task": votes["item_id"],
            "worker": votes["rater_id"],
            "label": votes["answer"].astype(int),
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = MajorityVote().fit_predict(data)
    assert ok["value"].to_dict() == expected.to_dict()


@pytest.mark.parametrize(("raters_per_item", "seed"), [(3, 3), (5, 4)])
def test_kept_tags_equal_crowdkit_binary_relevance_over_majority_vote(raters_per_item, seed):
    from crowdkit.aggregation import BinaryRelevance, MajorityVote

    # given: an odd number of raters per item, so a binary vote has no tie
    answers = random_questionnaire(items=150, raters_per_item=raters_per_item, seed=seed)
    tags = answers[answers["kind"] == "tags"]
    # when
    labels = analyse(answers=answers, settings=LabelSettings(keep_share=0.5)).labels
    ours = labels[labels["question"] == "style"].set_index("item_id")["value"]
    # then
    data = pd.DataFrame(
        {
            "task": tags["item_id"],
            "worker": tags["rater_id"],
            "label": [a.split("|") if a else [] for a in tags["answer"]],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = BinaryRelevance(MajorityVote()).fit_predict(data)
    assert ours.to_dict() == {task: "|".join(sorted(kept)) for task, kept in expected.items()}
    assert (ours != "").sum() > 50


def test_score_labels_equal_a_pandas_groupby():
    # given
    answers = random_questionnaire(items=100, raters_per_item=3, seed=5)
    scores = answers[answers["kind"] == "score"].assign(x=lambda f: f["answer"].astype(float))
    # when
    labels = analyse(answers=answers, settings=LabelSettings()).labels
    ours = labels[labels["kind"] == "score"].set_index("item_id")
    # then
    expected = scores.groupby("item_id")["x"].agg(["mean", "std", "size"])
    assert ours["value"].astype(float).to_numpy() == pytest.approx(expected["mean"].to_numpy())
    assert ours["std"].to_numpy() == pytest.approx(expected["std"].to_numpy())
    assert ours["n"].tolist() == expected["size"].tolist()


def test_the_result_does_not_depend_on_the_row_order():
    # given
    answers = random_questionnaire(items=60, raters_per_item=3, seed=6)
    # when
    first = analyse(answers=answers, settings=LabelSettings()).labels
    second = analyse(answers=answers.iloc[::-1], settings=LabelSettings()).labels
    # then: rows sorted by item, then questionnaire order (of the first appearance)
    assert first["item_id"].is_monotonic_increasing
    pd.testing.assert_frame_equal(
        first.sort_values(["item_id", "question"]).reset_index(drop=True),
        second.sort_values(["item_id", "question"]).reset_index(drop=True),
    )


def test_the_sorting_paths_for_large_key_spaces_give_the_same_labels(monkeypatch):
    # given
    answers = random_questionnaire(items=80, raters_per_item=3, seed=7)
    dense = analyse(answers=answers, settings=LabelSettings())
    # when: every key space counts as too large for a dense bincount
    monkeypatch.setattr("quality.stats.labels.keys.DENSE_KEYS", 0)
    sorted_ = analyse(answers=answers, settings=LabelSettings())
    # then
    pd.testing.assert_frame_equal(dense.labels, sorted_.labels)
    assert dense.summary_dict() == sorted_.summary_dict()


def test_more_than_64_tags_are_joined_in_name_order():
    # given: 70 tags (more than one 64-bit word per tag set); tag 65 and 3 chosen by all
    names = [f"t{j:02d}" for j in range(70)]
    rows = [(f"r{i}", "v", "style", "tags", "t65|t03|" + names[i]) for i in range(3)]
    rows += [(f"r{i}", "w", "style", "tags", names[69]) for i in range(2)]
    # when
    labels = labels_of(rows)
    # then
    assert labels["value"].tolist() == ["t03|t65", "t69"]
