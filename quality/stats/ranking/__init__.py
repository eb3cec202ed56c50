"""Ranking studies (VGA-Bench design): raters order the videos of N conditions for a
prompt, best to worst, on a question; consensus, agreement and model comparison.

Entry point: ``analyse(rankings, settings=RankingSettings(), model_scores=None)``.
"""

from quality.stats.ranking.analysis import (
    CONSENSUS_COLUMNS,
    EXCLUSION_COLUMNS,
    RANK_DISTRIBUTION_COLUMNS,
    RANKING_VERSION,
    RATER_TAU_COLUMNS,
    RankingResult,
    analyse,
    analyse_rankings,
)
from quality.stats.ranking.borda import average_places, borda_points, place_counts
from quality.stats.ranking.concordance import (
    Concordance,
    kendall_tau_b,
    kendall_w,
    spearman_rho,
    tau_b_null_variance,
)
from quality.stats.ranking.kemeny import (
    KemenyConsensus,
    kemeny_consensus,
    kemeny_orders,
    pairwise_wins,
    tied_pairs,
)
from quality.stats.ranking.plackett_luce import (
    ChoiceData,
    PlackettLuceFit,
    choice_data,
    fit_plackett_luce,
    mle_exists,
    rater_bootstrap_weights,
)
from quality.stats.ranking.rankings import (
    MAX_CONDITIONS,
    POOLED,
    QuestionRankings,
    RankingsError,
    encode_rankings,
    format_ranking,
    parse_ranking,
)
from quality.stats.ranking.rankings_csv import read_rankings_csv, read_scores_csv
from quality.stats.ranking.recall import recall_at_k, top_k_share
from quality.stats.ranking.screening import RANDOM_RANKER_RULE, RaterTaus, rater_taus
from quality.stats.ranking.settings import RankingSettings

__all__ = [
    "CONSENSUS_COLUMNS",
    "EXCLUSION_COLUMNS",
    "MAX_CONDITIONS",
    "POOLED",
    "RANDOM_RANKER_RULE",
    "RANKING_VERSION",
    "RANK_DISTRIBUTION_COLUMNS",
    "RATER_TAU_COLUMNS",
    "ChoiceData",
    "Concordance",
    "KemenyConsensus",
    "PlackettLuceFit",
    "QuestionRankings",
    "RankingResult",
    "RankingSettings",
    "RankingsError",
    "RaterTaus",
    "analyse",
    "analyse_rankings",
    "average_places",
    "borda_points",
    "choice_data",
    "encode_rankings",
    "fit_plackett_luce",
    "format_ranking",
    "kemeny_consensus",
    "kemeny_orders",
    "kendall_tau_b",
    "kendall_w",
    "mle_exists",
    "pairwise_wins",
    "parse_ranking",
    "place_counts",
    "rater_bootstrap_weights",
    "rater_taus",
    "read_rankings_csv",
    "read_scores_csv",
    "recall_at_k",
    "spearman_rho",
    "tau_b_null_variance",
    "tied_pairs",
    "top_k_share",
]
