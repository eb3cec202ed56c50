"""Simulated rating studies with a known truth, shared by the tests and bench/adaptive.py.

- ``RaterModelSource``: the generative model of SUREAL's MLE (Li & Bampis 2017; Li et al.
  2020, "A simple model for subject behavior in subjective experiments"):
  x_ij = psi_i + b_j + sqrt(v_j^2 + a_i^2) e_ij, e ~ N(0, 1), with video quality psi,
  content ambiguity a, rater bias b ~ N(0, bias_sd^2) and inconsistency v drawn from a
  pool, clipped to the scale's ends as a slider is. Its true per-video mean is
  E[clip(x)] over raters, in closed form (the mean of a clipped normal; Johnson, Kotz &
  Balakrishnan 1994, "Continuous Univariate Distributions" Vol. 1, Sec. 10.1).
- ``ResampledRatings``: a real study's ratings per video, drawn with replacement; the
  truth is the mean of all of that video's ratings.
- ``run_study``: sessions of a fresh rater each, over videos drawn at random from those
  still open (not sorted by uncertainty), the stopping rule applied after every session.
- ``coverage_at_stop``: one video replicated many times, one rating at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from quality.stats.adaptive.interval import CollectionPlan
from quality.stats.adaptive.stopping import StoppingRule, stop_many


def clipped_normal_mean(*, mean, sd, low: float, high: float) -> np.ndarray:
    """E[clip(X, low, high)] for X ~ N(mean, sd^2), elementwise (sd > 0)."""
    mean, sd = np.asarray(mean, dtype=np.float64), np.asarray(sd, dtype=np.float64)
    a, b = (low - mean) / sd, (high - mean) / sd
    pdf = np.exp(-0.5 * a * a) - np.exp(-0.5 * b * b)
    inside = special.ndtr(b) - special.ndtr(a)
    return (
        low * special.ndtr(a)
        + high * special.ndtr(-b)
        + mean * inside
        + sd * pdf / np.sqrt(2.0 * np.pi)
    )


@dataclass(frozen=True, eq=False)
class RaterModelSource:
    """SUREAL's rater model (module docstring); arrays (dimensions, videos)."""

    quality: np.ndarray
    ambiguity: np.ndarray
    bias_sd: float
    inconsistency: np.ndarray  # the pool a new rater's v is drawn from
    low: float = 0.0
    high: float = 100.0

    @property
    def shape(self) -> tuple[int, int]:
        return self.quality.shape

    def true_means(self) -> np.ndarray:
        sd = np.sqrt(
            self.bias_sd**2
            + self.inconsistency[:, None, None] ** 2
            + self.ambiguity[None, :, :] ** 2
        )
        means = clipped_normal_mean(mean=self.quality[None], sd=sd, low=self.low, high=self.high)
        return means.mean(axis=0)

    def session(self, rng: np.random.Generator, videos: np.ndarray) -> np.ndarray:
        """One new rater's scores on ``videos``: (dimensions, len(videos))."""
        dimensions = self.shape[0]
        bias = rng.normal(0.0, self.bias_sd, size=(dimensions, 1))  # per question
        v = self.inconsistency[rng.integers(self.inconsistency.size)]
        sd = np.sqrt(v**2 + self.ambiguity[:, videos] ** 2)
        noise = rng.standard_normal((dimensions, videos.size))
        return np.clip(self.quality[:, videos] + bias + sd * noise, self.low, self.high)


@dataclass(frozen=True, eq=False)
class ResampledRatings:
    """One dimension of a real study: ``ratings[i]`` holds every rating of video i."""

    ratings: tuple[np.ndarray, ...]
    low: float
    high: float

    @property
    def shape(self) -> tuple[int, int]:
        return 1, len(self.ratings)

    def true_means(self) -> np.ndarray:
        return np.array([[r.mean() for r in self.ratings]])

    def session(self, rng: np.random.Generator, videos: np.ndarray) -> np.ndarray:
        return np.array([[r[rng.integers(r.size)] for r in (self.ratings[v] for v in videos)]])


@dataclass(frozen=True, eq=False)
class StudyRun:
    """Where each (dimension, video) stopped: arrays (dimensions, videos), plus every
    rating given (``rater``: the session; ``video``; ``scores`` (dimensions, ratings))."""

    n: np.ndarray
    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    rater: np.ndarray
    video: np.ndarray
    scores: np.ndarray

    @property
    def ratings_used(self) -> int:
        """Ratings of videos (one rating scores every dimension of a video)."""
        return int(self.n[0].sum())

    def covered(self, truth: np.ndarray) -> np.ndarray:
        return (self.lower <= truth) & (truth <= self.upper)


def _final(plan: CollectionPlan, n: np.ndarray) -> np.ndarray:
    """A group-sequential plan is done at its last look; other plans never are."""
    limit = getattr(plan, "max_ratings", None)
    return n >= limit if limit is not None else np.zeros(n.shape, dtype=bool)


def run_study(
    *,
    source,
    plan: CollectionPlan,
    rule: StoppingRule,
    rng: np.random.Generator,
    session_size: int = 10,
    concurrent_sessions: int = 1,
) -> StudyRun:
    """Serve sessions until every video stopped (module docstring).

    ``concurrent_sessions`` sessions are drawn from the videos open at the same moment
    and scored before the rule looks again, as when many raters are served at once; here
    a video is in at most one of them, so it overshoots its stop by at most the one rating
    in flight (a platform that serves a video to several raters at once overshoots more).
    """
    dimensions, videos = source.shape
    states = [plan.start_many(shape=(videos,)) for _ in range(dimensions)]
    open_ = np.ones(videos, dtype=bool)
    raters, rated, given = [], [], []
    session = 0
    while open_.any():
        candidates = np.flatnonzero(open_)
        touched = []
        for _ in range(concurrent_sessions):
            if candidates.size == 0:
                break  # every open video already has a rating in flight
            chosen = rng.choice(candidates, size=min(session_size, candidates.size), replace=False)
            candidates = np.setdiff1d(candidates, chosen, assume_unique=True)
            scores = source.session(rng, chosen)
            for d in range(dimensions):
                plan.update_rows(states[d], rows=chosen, scores=scores[d])
            raters.append(np.full(chosen.size, session))
            rated.append(chosen)
            given.append(scores)
            touched.append(chosen)
            session += 1
        touched = np.unique(np.concatenate(touched))
        n, lower, upper = (
            np.stack([plan.bounds(state)[i][touched] for state in states]) for i in (0, 2, 3)
        )
        stop = stop_many(rule=rule, n=n, half_width=(upper - lower) / 2, final=_final(plan, n))
        open_[touched[stop]] = False
    per_dimension = [plan.bounds(state) for state in states]
    n, mean, lower, upper = (np.stack([b[i] for b in per_dimension]) for i in range(4))
    return StudyRun(
        n=n,
        mean=mean,
        lower=lower,
        upper=upper,
        rater=np.concatenate(raters),
        video=np.concatenate(rated),
        scores=np.concatenate(given, axis=1),
    )


@dataclass(frozen=True)
class CoverageResult:
    """Share of replications whose interval at the stop held the true mean, its Monte
    Carlo standard error, and the mean number of ratings at the stop."""

    coverage: float
    standard_error: float
    mean_ratings: float


def coverage_at_stop(
    *,
    plan: CollectionPlan,
    rule: StoppingRule,
    draw: Callable[[np.random.Generator, int], np.ndarray],
    true_mean: float,
    replications: int,
    rng: np.random.Generator,
) -> CoverageResult:
    """One video's study replicated: each open replication gets one more score from
    ``draw(rng, count)`` until the rule stops it; coverage of ``true_mean`` at the stop."""
    state = plan.start_many(shape=(replications,))
    open_ = np.ones(replications, dtype=bool)
    while open_.any():
        rows = np.flatnonzero(open_)
        plan.update_rows(state, rows=rows, scores=draw(rng, rows.size))
        n, _, lower, upper = (part[rows][None] for part in plan.bounds(state))
        stop = stop_many(rule=rule, n=n, half_width=(upper - lower) / 2, final=_final(plan, n))
        open_[rows[stop]] = False
    _, _, lower, upper = plan.bounds(state)
    covered = (lower <= true_mean) & (true_mean <= upper)
    share = float(covered.mean())
    return CoverageResult(
        coverage=share,
        standard_error=float(np.sqrt(share * (1 - share) / replications)),
        mean_ratings=float(state_n(plan, state).mean()),
    )


def state_n(plan: CollectionPlan, state) -> np.ndarray:
    return plan.bounds(state)[0]
