"""Benchmark: MOSaic's subjective models against Netflix SUREAL 0.9, same run.

Times every model of quality.stats.subjective.SUBJECTIVE_MODELS on the three
real SUREAL datasets in tests/data/sureal/ (and a larger synthetic sparse one
unless --quick), ours vs SUREAL's equivalent TYPE, and checks on the way that
both give the same quality scores. Best of N repeats, wall clock.

    .venv/bin/python bench/subjective_models.py [--quick]

Last stdout line: one JSON object with the timings and ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality.stats.subjective import (  # noqa: E402
    SUBJECTIVE_MODELS,
    SUREAL_MODEL_TYPES,
    fit_subjective_model,
    read_scores_csv,
)

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "sureal"
DATASETS = {
    "NFLX": "NFLX_dataset_public_raw.csv",
    "VQEGHD3": "VQEGHD3_dataset_raw.csv",
    "AGH": "quality_variation_2017_agh_tv_dataset.csv",
}


def sureal_dataset(scores: np.ndarray) -> SimpleNamespace:
    """A SUREAL raw dataset: one content, NaN for a missing rating."""
    return SimpleNamespace(
        dataset_name="bench",
        ref_videos=[{"content_id": 0, "content_name": "c", "path": "ref"}],
        dis_videos=[
            {"content_id": 0, "asset_id": i, "path": f"dis{i}", "os": row.tolist()}
            for i, row in enumerate(scores)
        ],
    )


def run_sureal(model_type: str, dataset: SimpleNamespace) -> dict:
    from sureal.dataset_reader import RawDatasetReader
    from sureal.subjective_model import SubjectiveModel

    model_class = SubjectiveModel.find_subclass(model_type)
    with contextlib.redirect_stdout(io.StringIO()):  # SUREAL prints every iteration
        return model_class(RawDatasetReader(dataset)).run_modeling()


def best_time(repeats: int, function, *args, **kwargs) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def synthetic(videos: int, raters: int, fill: float, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    quality = rng.uniform(1, 5, videos)
    bias = rng.normal(0, 0.3, raters)
    inconsistency = rng.uniform(0.3, 1.2, raters)
    scores = quality[:, None] + bias + rng.normal(size=(videos, raters)) * inconsistency
    scores[rng.random((videos, raters)) > fill] = np.nan
    return scores


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="real datasets only, fewer repeats")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # SUREAL's nan-warnings on sparse data
    cases = {case: read_scores_csv(path=DATA / name).scores for case, name in DATASETS.items()}
    if not args.quick:
        cases["synthetic1000x200"] = synthetic(1000, 200, fill=0.3)
    run_sureal("MOS", sureal_dataset(np.ones((2, 2))))  # import SUREAL outside the timings
    figures: dict[str, dict[str, float]] = {}
    print(f"{'dataset':<20}{'model':<14}{'iters':>6}{'ours ms':>10}{'sureal ms':>11}{'ratio':>8}")
    for case, scores in cases.items():
        dataset = sureal_dataset(scores)
        for name in SUBJECTIVE_MODELS:
            iterative = name in ("mle", "p910_annex_e")
            ours_s, ours = best_time(
                3 if args.quick else 7, fit_subjective_model, name=name, scores=scores
            )
            sureal_s, theirs = best_time(
                1 if (iterative or args.quick) else 3,
                run_sureal,
                SUREAL_MODEL_TYPES[name],
                dataset,
            )
            gap = np.nanmax(np.abs(ours.quality_scores - np.asarray(theirs["quality_scores"])))
            assert gap < 1e-9, (case, name, gap)
            ratio = sureal_s / ours_s
            figures[f"{case}/{name}"] = {
                "ours_ms": round(ours_s * 1e3, 3),
                "sureal_ms": round(sureal_s * 1e3, 3),
                "ratio": round(ratio, 1),
            }
            print(
                f"{case:<20}{name:<14}{ours.iterations:>6}{ours_s * 1e3:>10.2f}"
                f"{sureal_s * 1e3:>11.2f}{ratio:>7.1f}x"
            )
    ratios = [entry["ratio"] for entry in figures.values()]
    summary = {
        "bench": "subjective_models",
        "quick": args.quick,
        "min_ratio": min(ratios),
        "geomean_ratio": round(float(np.exp(np.mean(np.log(ratios)))), 1),
        "cases": figures,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
