"""Dawid-Skene against crowd-kit's DawidSkene (same start, iterations and stopping rule)."""

import warnings

import numpy as np
import pandas as pd
import pytest

from quality.stats.labels import ANSWER_COLUMNS, LabelSettings, analyse, fit_dawid_skene


def crowd(*, items: int, raters: int, classes: int, per_item: int, seed: int) -> pd.DataFrame:
    """Answers of raters of mixed skill (some near random, one biased to class 0)."""
    rng = np.random.default_rng(seed)
    skill = rng.uniform(0.2, 0.95, raters)
    truth = rng.integers(0, classes, items)
    rows = []
    for i in range(items):
        for w in rng.choice(raters, per_item, replace=False):
            if w == 0:
                answer = 0 if rng.random() < 0.7 else truth[i]
            else:
                answer = truth[i] if rng.random() < skill[w] else rng.integers(0, classes)
            rows.append((f"t{i:03d}", f"w{w:02d}", int(answer)))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def crowdkit_fit(data: pd.DataFrame, *, n_iter: int, tol: float):
    from crowdkit.aggregation import DawidSkene

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = DawidSkene(n_iter=n_iter, tol=tol)
        model.fit(data)
    return model


@pytest.mark.parametrize(
    ("seed", "n_iter", "tol", "classes"),
    [(1, 100, 1e-5, 4), (2, 100, 1e-5, 3), (3, 4, 1e-5, 5), (4, 60, 0.0, 2)],
)
def test_posteriors_priors_and_confusion_equal_crowdkit(seed, n_iter, tol, classes):
    # given
    data = crowd(items=250, raters=15, classes=classes, per_item=3, seed=seed)
    item, items = pd.factorize(data["task"], sort=True)
    rater, raters = pd.factorize(data["worker"], sort=True)
    answer, levels = pd.factorize(data["label"], sort=True)
    # when
    fit = fit_dawid_skene(
        item=item,
        rater=rater,
        answer=answer,
        n_items=len(items),
        n_raters=len(raters),
        n_classes=len(levels),
        max_iterations=n_iter,
        tolerance=tol,
    )
    # then
    model = crowdkit_fit(data, n_iter=n_iter, tol=tol)
    assert fit.iterations == len(model.loss_history_)
    assert fit.converged == (len(model.loss_history_) < n_iter)
    theirs = model.probas_.loc[items, levels].to_numpy()
    np.testing.assert_allclose(fit.posteriors, theirs, rtol=0, atol=1e-6)
    np.testing.assert_allclose(fit.priors, model.priors_.loc[levels], rtol=0, atol=1e-6)
    errors = model.errors_  # rows (worker, answered label), columns true label
    for (worker, answered), row in errors.iterrows():
        ours = fit.confusion[raters.get_loc(worker), :, levels.get_loc(answered)]
        np.testing.assert_allclose(ours, row.loc[levels], rtol=0, atol=1e-6)
    never_given = np.ones(fit.confusion[:, 0, :].shape, dtype=bool)
    for worker, answered in errors.index:
        never_given[raters.get_loc(worker), levels.get_loc(answered)] = False
    assert (fit.confusion.transpose(0, 2, 1)[never_given] == 0.0).all()
    np.testing.assert_allclose(fit.confusion.sum(axis=2), 1.0, atol=1e-12)
    assert (fit.labels == np.argmax(theirs, axis=1)).all()


def test_analyse_with_dawid_skene_equals_crowdkit_on_the_valid_ordinal_units():
    # given: one ordinal question with abstentions; two items where 2 of 3 abstained
    data = crowd(items=200, raters=12, classes=4, per_item=3, seed=9)
    answers = pd.DataFrame(
        {
            "rater_id": data["worker"],
            "item_id": data["task"],
            "question": "motion",
            "kind": "ordinal",
            "answer": (data["label"] + 1).astype(str),
        }
    )
    rng = np.random.default_rng(0)
    answers.loc[rng.random(len(answers)) < 0.05, "answer"] = "invalid"
    answers.loc[answers["item_id"].isin(["t000", "t001"]), "answer"] = [
        "invalid",
        "invalid",
        "3",
    ] * 2
    answers = answers.astype(str)[list(ANSWER_COLUMNS)]
    # when
    result = analyse(answers=answers, settings=LabelSettings(method="dawid-skene"))
    # then: crowd-kit on the level answers of the items that are not invalid
    labels = result.labels.set_index("item_id")
    invalid = labels.index[labels["status"] == "invalid"]
    assert {"t000", "t001"} <= set(invalid)
    votes = answers[(answers["answer"] != "invalid") & ~answers["item_id"].isin(invalid)]
    data = pd.DataFrame(
        {
            "task": votes["item_id"],
            "worker": votes["rater_id"],
            "label": votes["answer"].astype(int),
        }
    )
    model = crowdkit_fit(data, n_iter=100, tol=1e-5)
    valid = labels.drop(invalid)
    assert (valid["status"] == "ok").all()
    assert valid["value"].to_dict() == model.probas_.idxmax(axis=1).to_dict()
    summary = result.summary_dict()["dawid_skene"]["motion"]
    assert summary["iterations"] == len(model.loss_history_)
    assert summary["levels"] == ["1", "2", "3", "4"]
    for (worker, answered), row in model.errors_.iterrows():
        for true, p in row.items():
            assert summary["confusion"][worker][str(true)][str(answered)] == pytest.approx(
                p, abs=1e-6
            )
    fit = result.dawid_skene["motion"]
    assert fit.item_ids == sorted(set(votes["item_id"]))


def test_every_item_needs_an_answer():
    with pytest.raises(ValueError, match="every item needs at least one answer"):
        fit_dawid_skene(
            item=np.array([0, 0]),
            rater=np.array([0, 1]),
            answer=np.array([0, 1]),
            n_items=2,
            n_raters=2,
            n_classes=2,
        )
