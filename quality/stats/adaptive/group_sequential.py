"""Group-sequential looks: repeated confidence intervals with an alpha-spending boundary.

A few planned looks at n_1 < ... < n_K ratings (e.g. 10, 20, 35). At look k the interval is

    mean_k -+ c_k^t s_k / sqrt(n_k),   c_k^t = t^{-1}_{n_k - 1}(Phi(c_k))

(the repeated confidence intervals of Jennison & Turnbull 1989, "Interim analyses: the
repeated confidence interval approach", JRSS-B 51(3)), where c_1..c_K are the two-sided
group-sequential boundaries of the Lan & DeMets (1983) alpha-spending approach ("Discrete
sequential boundaries for clinical trials", Biometrika 70(3)): with information fractions
f_k = n_k / n_K, c_k solves

    P(|Z_1| < c_1, ..., |Z_{k-1}| < c_{k-1}, |Z_k| >= c_k) = a(f_k) - a(f_{k-1})

for the standardised running means Z_k of a Brownian motion (corr(Z_j, Z_k) =
sqrt(n_j / n_k)). Spending functions a(f):

- ``obrien_fleming``: 4 - 4 Phi(z_{1-alpha/4} / sqrt(f)), Lan & DeMets' (1983)
  O'Brien-Fleming type 2 - 2 Phi(z_{1-a/2} / sqrt(f)) spent on each side with a = alpha/2
  (the usual convention for symmetric two-sided tests; it gives the familiar
  4.877, 3.357, 2.680, 2.290, 2.031 for five equal looks at alpha = 0.05)
- ``pocock``: alpha log(1 + (e - 1) f)  (Lan & DeMets 1983, Pocock type)
- ``power``: alpha f^rho  (Kim & DeMets 1987, Biometrika 74(1))

All K intervals then hold the mean together with probability 1 - alpha, so a study that
stops at whichever look the data make it stop keeps coverage >= 1 - alpha.

Distributional assumption (bounded scores need one here, unlike the betting sequence):
ratings of a video are i.i.d. with finite variance and the running means are close enough
to normal that the joint normal boundary applies (central limit theorem). The variance is
estimated: c_k is turned into a Student t quantile with n_k - 1 degrees of freedom at the
same per-look tail probability, Jennison & Turnbull's (2000, "Group Sequential Methods
with Applications to Clinical Trials", Sec. 11.1) "significance level" approach. Skewed
scores near a scale's end, and small first looks, are where the assumption is weakest;
intervals are clipped to the scale.

The boundaries come from the recursive numerical integration of Armitage, McPherson &
Rowe (1969, JRSS-A 132(2)) as laid out by Jennison & Turnbull (2000, Ch. 19): the density
of the unstopped score statistic on the continuation region, look by look, with Simpson's
rule on ``GRID_POINTS`` points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special

from quality.stats.adaptive.interval import Interval, check_scale, check_score
from quality.stats.adaptive.moments import Moments

SPENDING_FUNCTIONS = ("obrien_fleming", "pocock", "power")
GRID_POINTS = 1201  # odd, for Simpson's rule
_LARGEST_BOUNDARY = 40.0  # |Z| beyond this has probability ~1e-350: no stopping


def spent_alpha(fraction: np.ndarray | float, *, alpha: float, spending: str, rho: float = 3.0):
    """a(f): the share of alpha spent by information fraction f (module docstring)."""
    f = np.clip(np.asarray(fraction, dtype=np.float64), 0.0, 1.0)
    if spending == "obrien_fleming":
        z = special.ndtri(1.0 - alpha / 4.0)
        with np.errstate(divide="ignore"):
            return np.where(f > 0, 4.0 - 4.0 * special.ndtr(z / np.sqrt(f)), 0.0)
    if spending == "pocock":
        return alpha * np.log1p((math.e - 1.0) * f)
    if spending == "power":
        return alpha * f**rho
    raise ValueError(f"unknown spending function {spending!r}; one of {SPENDING_FUNCTIONS}")


def _simpson_weights(points: int, step: float) -> np.ndarray:
    weights = np.ones(points)
    weights[1:-1:2] = 4.0
    weights[2:-1:2] = 2.0
    return weights * step / 3.0


def boundaries(
    *, fractions, alpha: float = 0.05, spending: str = "obrien_fleming", rho: float = 3.0
) -> np.ndarray:
    """Two-sided normal boundaries c_1..c_K for information fractions 0 < f_1 < ... < f_K = 1.

    Lan & DeMets (1983) alpha spending, by recursive numerical integration (Armitage,
    McPherson & Rowe 1969); see the module docstring.
    """
    f = np.asarray(fractions, dtype=np.float64)
    if f.ndim != 1 or f.size == 0 or np.any(np.diff(f) <= 0) or f[0] <= 0 or f[-1] > 1:
        raise ValueError("fractions must increase strictly within (0, 1]")
    spent = spent_alpha(f, alpha=alpha, spending=spending, rho=rho)
    increments = np.diff(np.concatenate([[0.0], spent]))
    result = np.empty(f.size)
    # Look 1: Z_1 is standard normal.
    result[0] = _LARGEST_BOUNDARY if increments[0] <= 0 else special.ndtri(1 - increments[0] / 2)
    # Density of the score statistic S_1 = W(f_1) on its continuation region.
    half = result[0] * math.sqrt(f[0])
    nodes = np.linspace(-half, half, GRID_POINTS)
    density = np.exp(-(nodes**2) / (2 * f[0])) / math.sqrt(2 * math.pi * f[0])
    for k in range(1, f.size):
        step_sd = math.sqrt(f[k] - f[k - 1])
        mass = density * _simpson_weights(GRID_POINTS, nodes[1] - nodes[0])
        root_f = math.sqrt(f[k])

        def exit_probability(c: float, mass=mass, nodes=nodes, step_sd=step_sd, root_f=root_f):
            edge = c * root_f
            return float(
                mass
                @ (special.ndtr((-edge - nodes) / step_sd) + special.ndtr((nodes - edge) / step_sd))
            )

        target = increments[k]
        if target <= 0 or exit_probability(_LARGEST_BOUNDARY) >= target:
            result[k] = _LARGEST_BOUNDARY
        else:
            result[k] = optimize.brentq(
                lambda c, target=target: exit_probability(c) - target,
                0.0,
                _LARGEST_BOUNDARY,
                xtol=1e-10,
            )
        half = result[k] * root_f
        new_nodes = np.linspace(-half, half, GRID_POINTS)
        kernel = np.exp(-((new_nodes[:, None] - nodes[None, :]) ** 2) / (2 * step_sd**2))
        density = kernel @ mass / (math.sqrt(2 * math.pi) * step_sd)
        nodes = new_nodes
    return result


@dataclass(frozen=True, eq=False)
class LookState:
    """Running moments of one or many (video, dimension), and the interval of the last
    look reached (the whole scale before the first look)."""

    moments: Moments
    lower: np.ndarray
    upper: np.ndarray


@dataclass(frozen=True)
class GroupSequentialPlan:
    """Repeated t-intervals at planned looks (module docstring) as a collection plan."""

    looks: tuple[int, ...] = (10, 20, 35)
    alpha: float = 0.05
    low: float = 0.0
    high: float = 100.0
    spending: str = "obrien_fleming"
    rho: float = 3.0
    _t_critical: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_scale(alpha=self.alpha, low=self.low, high=self.high)
        looks = tuple(int(n) for n in self.looks)
        if not looks or looks[0] < 2 or any(np.diff(looks) <= 0):
            raise ValueError("looks must be increasing whole numbers of ratings, the first >= 2")
        object.__setattr__(self, "looks", looks)
        normal = self.normal_boundaries
        sizes = np.asarray(looks, dtype=np.float64)
        t = special.stdtrit(sizes - 1.0, special.ndtr(normal))
        object.__setattr__(self, "_t_critical", t)

    @property
    def normal_boundaries(self) -> np.ndarray:
        """c_1..c_K on the standard normal scale."""
        fractions = np.asarray(self.looks, dtype=np.float64) / self.looks[-1]
        return boundaries(
            fractions=fractions, alpha=self.alpha, spending=self.spending, rho=self.rho
        )

    @property
    def t_boundaries(self) -> np.ndarray:
        """c_k^t: the Student t multipliers actually used at each look."""
        return self._t_critical.copy()

    @property
    def max_ratings(self) -> int:
        return self.looks[-1]

    # One video -------------------------------------------------------------------------

    def start(self) -> LookState:
        return self.start_many(shape=())

    def update(self, state: LookState, *, score: float) -> LookState:
        x = check_score(score, low=self.low, high=self.high)
        moments = state.moments.add(np.asarray(x))
        lower, upper = self._at_looks(moments, state.lower, state.upper)
        return LookState(moments=moments, lower=lower, upper=upper)

    def interval(self, state: LookState) -> Interval:
        n, mean, lower, upper = self.bounds(state)
        return Interval(
            n=int(n),
            mean=float(mean),
            lower=float(lower),
            upper=float(upper),
            final=int(n) >= self.looks[-1],
        )

    def replay(self, *, scores) -> LookState:
        state = self.start()
        for score in np.asarray(scores, dtype=np.float64).ravel():
            state = self.update(state, score=score)
        return state

    # Many videos at once (simulations) -------------------------------------------------

    def start_many(self, *, shape: tuple[int, ...]) -> LookState:
        return LookState(
            moments=Moments.empty(shape),
            lower=np.full(shape, float(self.low)),
            upper=np.full(shape, float(self.high)),
        )

    def update_rows(self, state: LookState, *, rows: np.ndarray, scores: np.ndarray) -> None:
        state.moments.add_rows(rows=rows, x=np.asarray(scores, dtype=np.float64))
        part = Moments(
            n=state.moments.n[rows], mean=state.moments.mean[rows], m2=state.moments.m2[rows]
        )
        state.lower[rows], state.upper[rows] = self._at_looks(
            part, state.lower[rows], state.upper[rows]
        )

    def bounds(self, state: LookState) -> tuple[np.ndarray, ...]:
        mean = np.where(state.moments.n > 0, state.moments.mean, np.nan)
        return state.moments.n, mean, state.lower, state.upper

    def _at_looks(
        self, moments: Moments, lower: np.ndarray, upper: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The new look's interval where n is a look, the previous one elsewhere."""
        looks = np.asarray(self.looks)
        index = np.searchsorted(looks, moments.n)
        at_look = (index < looks.size) & (looks[np.minimum(index, looks.size - 1)] == moments.n)
        critical = self._t_critical[np.minimum(index, looks.size - 1)]
        with np.errstate(invalid="ignore", divide="ignore"):
            half = critical * moments.std() / np.sqrt(moments.n)
        new_lower = np.clip(moments.mean - half, self.low, self.high)
        new_upper = np.clip(moments.mean + half, self.low, self.high)
        return np.where(at_look, new_lower, lower), np.where(at_look, new_upper, upper)
