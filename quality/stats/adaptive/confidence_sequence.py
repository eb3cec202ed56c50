"""Anytime-valid confidence sequence for the mean of bounded scores, by betting.

Waudby-Smith & Ramdas (2023), "Estimating means of bounded random variables by betting",
JRSS-B 86(1): the hedged-capital confidence sequence with predictable plug-in bets
(their Sec. 4). Scores x in [low, high] are mapped to
y = (x - low) / (high - low) in [0, 1]. For every candidate mean m a gambler bets against
"the mean is m" from both sides:

    K+_t(m) = prod_{i<=t} (1 + l+_i(m) (y_i - m)),   l+_i(m) = min(l_i, c / m)
    K-_t(m) = prod_{i<=t} (1 - l-_i(m) (y_i - m)),   l-_i(m) = min(l_i, c / (1 - m))

and the hedged capital is max(theta K+, (1 - theta) K-) with theta = 1/2. Both products
are non-negative martingales when m is the true mean, so by Ville's inequality the set
C_t = {m : theta K+_t(m) < 1/alpha and (1 - theta) K-_t(m) < 1/alpha} holds the mean at
every t at once with probability >= 1 - alpha, whenever the study stops, on the data or not.

The predictable plug-in bet (the paper's lambda^{PrPl+-}, chosen before y_t is seen):

    l_t = sqrt(2 log(2 / alpha) / (s2_{t-1} t log(1 + t)))
    s2_t = (1/4 + sum_{i<=t} (y_i - mu_i)^2) / (t + 1),   mu_t = (1/2 + sum_{i<=t} y_i) / (t + 1)

truncated at c / m and c / (1 - m) so that no factor can reach 0; c = 1/2 by default (the
paper suggests 1/2 or 3/4). The sequence is reported as its running intersection
(the paper's Sec. 3.2), also valid: [max_{s<=t} lower_s, min_{s<=t} upper_s].

Computation. K+ is non-increasing in m and K- non-decreasing (each factor is), so C_t is
an interval (L_t, U_t). The capitals are kept on a grid of ``grid_size`` evenly spaced
candidate means over the whole scale (both ends included), i.e. a resolution of
(high - low) / (grid_size - 1): 0.1 points on a 0-100 slider by default. The reported lower
bound is the largest grid point the K+ bettor has rejected, which is <= L_t, and the upper
bound the smallest grid point the K- bettor has rejected, >= U_t: the interval is
conservative with respect to the grid (at most one grid step wider each side than the
exact C_t), never narrower. The running intersection can only be empty on an event of
probability <= alpha; then both ends are reported as their midpoint.

State per (video, dimension): n, two running sums and the two log-capitals on the grid
(2 x grid_size floats), so one more score costs O(grid_size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from quality.stats.adaptive.interval import Interval, check_scale, check_score

DEFAULT_GRID_SIZE = 1001
DEFAULT_TRUNCATION = 0.5  # c of the paper: bets stay within c/m and c/(1-m)
HEDGE_THETA = 0.5  # the paper's theta: half the capital bets each way
_CHUNK = 256  # rows of (time, grid) log-factors held at once by ``sequence``


@dataclass(frozen=True, eq=False)
class BettingState:
    """The confidence sequence of one or many (video, dimension) after ``n`` scores.

    Every field has the batch shape (``()`` for one video) except the log-capitals, which
    add the grid as last axis. Values are on the [0, 1] scale (y), not the score scale.
    """

    n: np.ndarray
    score_total: np.ndarray  # sum of the scores themselves, for an exact mean
    total: np.ndarray  # sum y_i
    squares: np.ndarray  # sum (y_i - mu_i)^2, the plug-in variance's numerator
    log_plus: np.ndarray  # log K+_t(m) on the grid
    log_minus: np.ndarray  # log K-_t(m) on the grid
    lower: np.ndarray  # running max of the lower bounds
    upper: np.ndarray  # running min of the upper bounds


@dataclass(frozen=True)
class SequenceResult:
    """The confidence sequence after each score: arrays of equal length, one per score."""

    n: np.ndarray
    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


@dataclass(frozen=True)
class AnytimeConfidenceSequence:
    """The betting confidence sequence as a collection plan (see ``interval.py``)."""

    alpha: float = 0.05
    low: float = 0.0
    high: float = 100.0
    grid_size: int = DEFAULT_GRID_SIZE
    truncation: float = DEFAULT_TRUNCATION
    _grid: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_scale(alpha=self.alpha, low=self.low, high=self.high)
        if self.grid_size < 3:
            raise ValueError("grid_size must be at least 3")
        if not 0.0 < self.truncation < 1.0:
            raise ValueError("truncation (c) must be in (0, 1)")
        object.__setattr__(self, "_grid", np.linspace(0.0, 1.0, self.grid_size))

    @property
    def grid_step(self) -> float:
        """The grid resolution on the score scale: how much wider than exact it may be."""
        return (self.high - self.low) / (self.grid_size - 1)

    # One video -------------------------------------------------------------------------

    def start(self) -> BettingState:
        return self.start_many(shape=())

    def update(self, state: BettingState, *, score: float) -> BettingState:
        x = check_score(score, low=self.low, high=self.high)
        return self._advance(state, np.asarray(x))

    def interval(self, state: BettingState) -> Interval:
        n, mean, lower, upper = self.bounds(state)
        return Interval(n=int(n), mean=float(mean), lower=float(lower), upper=float(upper))

    def replay(self, *, scores) -> BettingState:
        state = self.start()
        for score in np.asarray(scores, dtype=np.float64).ravel():
            state = self.update(state, score=score)
        return state

    # Many videos at once (simulations) -------------------------------------------------

    def start_many(self, *, shape: tuple[int, ...]) -> BettingState:
        zeros = np.zeros(shape)
        return BettingState(
            n=np.zeros(shape, dtype=np.int64),
            score_total=zeros.copy(),
            total=zeros,
            squares=zeros.copy(),
            log_plus=np.zeros((*shape, self.grid_size)),
            log_minus=np.zeros((*shape, self.grid_size)),
            lower=zeros.copy(),
            upper=np.ones(shape),
        )

    def update_rows(self, state: BettingState, *, rows: np.ndarray, scores: np.ndarray) -> None:
        """Add one score to each of ``rows`` (distinct) of a 1-d batch, in place."""
        part = BettingState(
            n=state.n[rows],
            score_total=state.score_total[rows],
            total=state.total[rows],
            squares=state.squares[rows],
            log_plus=state.log_plus[rows],
            log_minus=state.log_minus[rows],
            lower=state.lower[rows],
            upper=state.upper[rows],
        )
        new = self._advance(part, np.asarray(scores, dtype=np.float64))
        for name in (f.name for f in fields(BettingState)):
            getattr(state, name)[rows] = getattr(new, name)

    def bounds(self, state: BettingState) -> tuple[np.ndarray, ...]:
        """(n, mean, lower, upper) on the score scale, batch-shaped; mean NaN at n = 0."""
        lower, upper = state.lower, state.upper
        crossed = lower > upper  # empty intersection: report the midpoint (docstring)
        middle = (lower + upper) / 2.0
        lower = np.where(crossed, middle, lower)
        upper = np.where(crossed, middle, upper)
        width = self.high - self.low
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(state.n > 0, state.score_total / state.n, np.nan)
        return (
            state.n,
            mean,
            self.low + width * lower,
            self.low + width * upper,
        )

    # The whole sequence at once ---------------------------------------------------------

    def sequence(self, scores) -> SequenceResult:
        """The interval after each of ``scores`` (arrival order), vectorised over time."""
        values = np.asarray(scores, dtype=np.float64).ravel()
        for value in values:
            check_score(value, low=self.low, high=self.high)
        y = (values - self.low) / (self.high - self.low)
        count = y.size
        t = np.arange(1, count + 1, dtype=np.float64)
        mu = (0.5 + np.cumsum(y)) / (t + 1.0)
        squares = np.cumsum((y - mu) ** 2)
        squares_before = np.concatenate([[0.0], squares[:-1]])
        bets = self._bets(t, squares_before)
        lower = np.empty(count)
        upper = np.empty(count)
        log_plus = np.zeros(self.grid_size)
        log_minus = np.zeros(self.grid_size)
        for start in range(0, count, _CHUNK):
            stop = min(start + _CHUNK, count)
            plus, minus = self._log_factors(bets[start:stop], y[start:stop])
            plus = log_plus + np.cumsum(plus, axis=0)
            minus = log_minus + np.cumsum(minus, axis=0)
            lower[start:stop], upper[start:stop] = self._grid_bounds(plus, minus)
            log_plus, log_minus = plus[-1], minus[-1]
        state = BettingState(
            n=t.astype(np.int64),
            score_total=np.cumsum(values),
            total=np.cumsum(y),
            squares=squares,
            log_plus=np.empty(0),
            log_minus=np.empty(0),
            lower=np.maximum.accumulate(lower) if count else lower,
            upper=np.minimum.accumulate(upper) if count else upper,
        )
        n, mean, low, high = self.bounds(state)
        return SequenceResult(n=n, mean=mean, lower=low, upper=high)

    # The betting itself -----------------------------------------------------------------

    def _bets(self, t: np.ndarray, squares_before: np.ndarray) -> np.ndarray:
        """The predictable plug-in bet l_t from the scores before t (module docstring)."""
        variance_before = (0.25 + squares_before) / t  # s2_{t-1} = (1/4 + sum) / ((t-1) + 1)
        return np.sqrt(2.0 * math.log(2.0 / self.alpha) / (variance_before * t * np.log1p(t)))

    def _log_factors(self, bets: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log(1 + l+(m)(y - m)) and log(1 - l-(m)(y - m)) on the grid, batch x grid."""
        grid = self._grid
        c = self.truncation
        with np.errstate(divide="ignore"):
            cap_plus = c / grid  # inf at m = 0: no truncation needed there
            cap_minus = c / (1.0 - grid)
        bets = np.asarray(bets)[..., None]
        excess = np.asarray(y)[..., None] - grid
        plus = np.log1p(np.minimum(bets, cap_plus) * excess)
        minus = np.log1p(-np.minimum(bets, cap_minus) * excess)
        return plus, minus

    def _grid_bounds(
        self, log_plus: np.ndarray, log_minus: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The conservative grid bounds of C_t (module docstring), on the [0, 1] scale."""
        threshold = -math.log(HEDGE_THETA * self.alpha)  # theta K >= 1/alpha
        grid = self._grid
        last = self.grid_size - 1
        # K+ rejects a prefix of the grid, K- a suffix; m = 1 (resp. 0) is never rejected.
        first_kept = np.argmin(log_plus >= threshold, axis=-1)
        last_kept = last - np.argmin(log_minus[..., ::-1] >= threshold, axis=-1)
        return grid[np.maximum(first_kept - 1, 0)], grid[np.minimum(last_kept + 1, last)]

    def _advance(self, state: BettingState, x: np.ndarray) -> BettingState:
        """The state after one more score x (on the score scale) per batch element."""
        y = (x - self.low) / (self.high - self.low)
        n = state.n + 1
        t = n.astype(np.float64)
        bet = self._bets(t, state.squares)
        plus, minus = self._log_factors(bet, y)
        log_plus = state.log_plus + plus
        log_minus = state.log_minus + minus
        total = state.total + y
        mu = (0.5 + total) / (t + 1.0)
        lower, upper = self._grid_bounds(log_plus, log_minus)
        return BettingState(
            n=n,
            score_total=state.score_total + x,
            total=total,
            squares=state.squares + (y - mu) ** 2,
            log_plus=log_plus,
            log_minus=log_minus,
            lower=np.maximum(state.lower, lower),
            upper=np.minimum(state.upper, upper),
        )


def sequence(
    scores,
    *,
    alpha: float = 0.05,
    low: float = 0.0,
    high: float = 100.0,
    grid_size: int = DEFAULT_GRID_SIZE,
) -> SequenceResult:
    """The betting confidence sequence (module docstring) after each score of one video."""
    plan = AnytimeConfidenceSequence(alpha=alpha, low=low, high=high, grid_size=grid_size)
    return plan.sequence(scores)
