"""Benchmark: adaptive collection (stop a video once its score is known; informative pairs)
against the fixed designs it would replace, all in the same run.

1. GAIA-shaped single-stimulus studies (3 dimensions, 0-100 slider) with a known truth:
   rater bias and inconsistency from SUREAL's MLE model fitted to the three public sets
   (tests/data/sureal), rescaled so that the raters' own noise is GAIA's smallest
   per-video SD (8 points), and content ambiguity spreading the per-video SD uniformly
   over GAIA's 8-25 points. The fixed design rates every video 35 times. Its worst-case
   interval, the t half-width at 35 ratings of a video with SD 25 (8.6 points), is the
   target every adaptive rule must reach with its own (valid) interval. Reported per
   rule: ratings used vs 35, coverage of the true per-video mean at the stop, the share
   that reached the target before the cap, and the Z-scored MOS (per-rater z, then the
   mean, as GAIA) and the plain MOS (the mean of the raw scores) against the truth (SRCC;
   RMSE after a least-squares line onto the truth), each beside a fixed design spending
   the same budget evenly (``even_at_budget``). Rules:
   the anytime betting sequence, group-sequential looks (O'Brien-Fleming and Pocock
   spending), Stein's two-stage plan (first stage of 15 ratings) and the naive
   t-interval looked at after every rating (not valid: the under-coverage it shows is
   the point). Sessions of 10 videos. Then the same on one dimension (1b), where each
   interval's own data decide its stop, and (1c) the two-stage plan at sessions of 10,
   50 and 300 videos (GAIA's) over repeated studies: its coverage, and its Z-scored MOS
   against the even design's at equal budget (per-session z-scoring costs adaptive
   collection accuracy when sessions are short: ``zmos_by_session_size``).
2. The three public sets, each video's ratings resampled: the same saving and coverage
   figures, the fixed design being the set's own ratings per video (median).
3. Paired comparison (10-30 conditions, 20 % ties, Thurstone with a tie band): judgments
   needed to match the full balanced design's scale accuracy (RMSE to the true scale,
   Spearman), for this project's active choice (ASAP's batch mode with pending updates and
   the rater constraints; ``active``: by expected variance reduction, the default;
   ``active_information``: by ASAP's expected information gain), random pairs and
   Swiss-system pairing (implemented here from the FIDE rules: neighbours in the current
   ranking), and, as the ceiling, the
   A-optimal design computed from the TRUE scale (no method that must learn the scale can
   beat it). The saving is read from the squared error at the full budget, paired per
   repeat, with its standard error (``mse_saving``); where the mean RMSE and SRCC curves
   first reach the balanced design's is printed too, but that crossing is noisy.

    .venv/bin/python bench/adaptive.py [--quick] [--seed N] [--parts gaia,public,preference]
        [--conditions 10,20,30] [--preference-repeats 64]

Last stdout line: one JSON object with every figure.

The parts: bench/adaptive_gaia.py (1), bench/adaptive_public.py (2) and
bench/adaptive_pairs.py (3); this file runs them and prints the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.adaptive_gaia import part_gaia, print_gaia  # noqa: E402
from bench.adaptive_pairs import part_preference, print_preference  # noqa: E402
from bench.adaptive_public import part_public, print_public  # noqa: E402

PARTS = ("gaia", "public", "preference")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller studies (about a minute)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}"
    )
    parser.add_argument(
        "--conditions", default=None, help="preference: condition counts (default 10,20,30)"
    )
    parser.add_argument(
        "--preference-repeats", type=int, default=None, help="preference: studies (default 64)"
    )
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    if parts - set(PARTS):
        parser.error(f"--parts takes {', '.join(PARTS)}")
    args.videos = 600 if args.quick else 2000
    args.public_repeats = 2 if args.quick else 10
    default_conditions = (10, 20) if args.quick else (10, 20, 30)
    args.conditions = (
        tuple(int(c) for c in args.conditions.split(",")) if args.conditions else default_conditions
    )
    if args.preference_repeats is None:
        args.preference_repeats = 4 if args.quick else 64
    args.session_repeats = 2 if args.quick else 12
    start = time.perf_counter()
    summary = {"bench": "adaptive", "quick": args.quick}
    if "gaia" in parts:
        summary["gaia"] = part_gaia(args, np.random.default_rng(args.seed))
        print_gaia(summary["gaia"], args)
    if "public" in parts:
        summary["public"] = part_public(args)
        print_public(summary["public"])
    if "preference" in parts:
        summary["preference"] = part_preference(args)
        print_preference(summary["preference"])
    summary["seconds"] = round(time.perf_counter() - start, 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
