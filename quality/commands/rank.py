"""``python -m quality rank RANKINGS.csv --out DIR [--against SCORES.csv]``: a ranking
study (VGA-Bench design) from CSV files.

Reads the rankings (``rater_id,question,prompt_id,ranking``, ranking ``a>b=c>d`` best
first, ``=`` for ties) and optionally a model's scores (``condition,score``, higher is
better), runs ``quality.stats.ranking.analyse_rankings`` and writes DIR/consensus.csv (one
block per question and prompt, prompt_id ``*`` for the pooled ranking),
DIR/rank_distribution.csv and DIR/summary.json (all at once: quality.commands.io).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from quality.commands.io import (
    add_bootstrap,
    add_out,
    as_option,
    bad_input,
    csv_text,
    finish,
    json_ready,
    left_out,
)
from quality.stats.ranking import (
    CONSENSUS_COLUMNS,
    RANK_DISTRIBUTION_COLUMNS,
    RankingsError,
    RankingSettings,
    analyse_rankings,
    encode_rankings,
    read_rankings_csv,
    read_scores_csv,
)

NAME = "rank"
HELP = "Kemeny / Plackett-Luce / Borda consensus, Kendall's W, Recall@K from a rankings CSV"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "rankings", type=Path, help="CSV: rater_id,question,prompt_id,ranking (a>b=c>d)"
    )
    add_out(parser, writes=("consensus.csv", "rank_distribution.csv", "summary.json"))
    parser.add_argument(
        "--against",
        type=Path,
        metavar="SCORES.csv",
        help="a model's scores, CSV condition,score (higher is better): Recall@K, tau, rho",
    )
    defaults = RankingSettings()
    add_bootstrap(
        parser, replicates=defaults.bootstrap, seed=defaults.seed, of="the 95%% intervals"
    )
    parser.add_argument(
        "--no-screen",
        dest="screen",
        action="store_false",
        help="keep the raters the random-ranker rule flags (they are still reported)",
    )
    parser.add_argument(
        "--screen-alpha",
        type=float,
        default=defaults.screen_alpha,
        help="one-sided level of the random-ranker test (default %(default)s)",
    )
    parser.add_argument(
        "--pl-prior-weight",
        type=float,
        default=defaults.pl_prior_weight,
        help="ghost-condition prior for Plackett-Luce fits without a finite maximum (0: off; "
        "default %(default)s)",
    )


def _settings(args: argparse.Namespace) -> RankingSettings:
    settings = RankingSettings(
        bootstrap=args.bootstrap,
        seed=args.seed,
        screen=args.screen,
        screen_alpha=args.screen_alpha,
        pl_prior_weight=args.pl_prior_weight,
    )
    try:
        settings.check()
    except RankingsError as exc:  # the message starts with the setting's name
        raise RankingsError(as_option(exc)) from None
    return settings


def _naming(path: Path | None, compute):
    """``compute()``, with the file's name in front of the errors about its content."""
    try:
        return compute()
    except RankingsError as exc:
        if path is None:
            raise
        raise RankingsError(f"{path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    try:
        settings = _settings(args)
        frame = read_rankings_csv(path=args.rankings)
        questions = _naming(args.rankings, lambda: encode_rankings(frame))
        scores = None if args.against is None else read_scores_csv(path=args.against)
        result = _naming(
            args.against,
            lambda: analyse_rankings(questions, settings=settings, model_scores=scores),
        )
    except (RankingsError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        return bad_input(exc)
    summary = json_ready(result.summary_dict())
    files = {
        "consensus.csv": csv_text(result.consensus, CONSENSUS_COLUMNS),
        "rank_distribution.csv": csv_text(result.rank_distribution, RANK_DISTRIBUTION_COLUMNS),
        "summary.json": json.dumps(summary, indent=1, allow_nan=False) + "\n",
    }
    rankings = sum(counts["rankings"] for counts in result.counts.values())
    return finish(
        args.out,
        files,
        f"{rankings} rankings on {len(result.questions)} question(s), "
        f"{len(result.exclusions)} rater exclusion(s)"
        f"{left_out(frame)}; wrote {args.out}",
    )
