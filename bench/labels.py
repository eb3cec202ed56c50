"""Benchmark: ``python -m quality labels`` against crowd-kit 1.4 majority voting, same run.

A synthetic VGA-Bench questionnaire: N videos x 3 raters (of a pool of 300) x 5
questions (one 1-10 score, two 1-5 ordinal questions with 5 % "invalid" answers, two
tags questions with 8 and 6 tags), 900,000 answers for N = 60,000.

- ours: the whole command, in-process (``quality.cli.main(["labels", CSV, "--out",
  DIR])``): reading the CSV, checking it, the labels, alpha per question and per tag,
  rater agreement, and writing labels.csv and summary.json. Also, as a second figure,
  ``analyse`` alone on the answers already read into memory as text (the web
  service's path).
- baseline: crowd-kit on the same answers already in memory and already in its input
  format (tags as lists; that preparation and reading the CSV are not timed):
  ``MajorityVote`` per ordinal question (abstentions left out), ``BinaryRelevance(
  MajorityVote())`` per tags question, and a pandas groupby mean per score question.
  The baseline thus computes less (no alpha, no checks, no I/O) than ours. A third
  figure times crowd-kit from the same CSV file (pandas reads it, the answers are put
  into crowd-kit's format, then aggregated): file to labels on both sides, though
  crowd-kit's side still writes nothing and computes no alpha.

On the way, the labels ours wrote are checked to equal crowd-kit's: every tags unit
(3 raters: no tie), every ordinal unit with a strict winner (ties and invalid units
are ours to flag, crowd-kit breaks ties silently), and every score mean (to 1e-12).
Best of N repeats, wall clock.

    .venv/bin/python bench/labels.py [--quick]

Last stdout line: one JSON object with the timings and the ratios (``ratio``: whole
command against crowd-kit; ``compute_ratio``: ``analyse`` against crowd-kit;
``from_csv_ratio``: whole command against crowd-kit from the CSV).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality.cli import main as quality_main  # noqa: E402
from quality.stats.labels import (  # noqa: E402
    ANSWER_COLUMNS,
    LabelSettings,
    analyse,
    read_answers_csv,
)

SCORE_QUESTIONS = ("aesthetic_score",)
ORDINAL_QUESTIONS = ("motion_quality", "prompt_alignment")
TAG_QUESTIONS = {
    "style_tags": ("anime", "cinematic", "documentary", "noir", "pastel", "photoreal", "retro"),
    "artifact_tags": ("blur", "distortion", "flicker", "morphing", "text_garble", "watermark"),
}


def synthetic_answers(videos: int, *, raters: int = 300, seed: int = 7) -> pd.DataFrame:
    """3 distinct raters per video; answers near each video's truth, with noise."""
    rng = np.random.default_rng(seed)
    item = np.repeat(np.arange(videos), 3)
    first = rng.integers(0, raters, videos)
    second = rng.integers(1, raters // 2, videos)
    third = rng.integers(raters // 2, raters, videos)
    rater = (first[:, None] + np.stack([np.zeros(videos, int), second, third], 1)) % raters
    rater = rater.ravel()
    video_ids = np.array([f"vid{i:06d}" for i in range(videos)], dtype=object)[item]
    rater_ids = np.array([f"rater{j:03d}" for j in range(raters)], dtype=object)[rater]
    frames = []

    def add(question: str, kind: str, answer: np.ndarray) -> None:
        frames.append(
            pd.DataFrame(
                {
                    "rater_id": rater_ids,
                    "item_id": video_ids,
                    "question": question,
                    "kind": kind,
                    "answer": answer,
                }
            )
        )

    for question in SCORE_QUESTIONS:
        quality = rng.uniform(1, 10, videos)[item]
        score = np.clip(np.rint(quality + rng.normal(0, 1, item.size)), 1, 10).astype(int)
        add(question, "score", score.astype(str))
    for question in ORDINAL_QUESTIONS:
        truth = rng.integers(1, 6, videos)[item]
        level = np.where(rng.random(item.size) < 0.7, truth, rng.integers(1, 6, item.size))
        answer = level.astype(str).astype(object)
        answer[rng.random(item.size) < 0.05] = "invalid"
        add(question, "ordinal", answer)
    for question, tags in TAG_QUESTIONS.items():
        k = len(tags)
        truth = rng.random((videos, k)) < 0.2
        noise = rng.random((item.size, k)) < 0.1
        chosen = np.where(rng.random((item.size, k)) < 0.85, truth[item], noise)
        combos = np.array(
            ["|".join(t for j, t in enumerate(tags) if b >> j & 1) for b in range(1 << k)],
            dtype=object,
        )
        add(question, "tags", combos[(chosen * (1 << np.arange(k))).sum(axis=1)])
    return pd.concat(frames, ignore_index=True)


def crowdkit_inputs(answers: pd.DataFrame) -> dict[str, tuple[str, pd.DataFrame]]:
    """Per question, (kind, crowd-kit's task/worker/label frame)."""
    inputs = {}
    for question, part in answers.groupby("question", sort=False):
        kind = part["kind"].iloc[0]
        frame = pd.DataFrame(
            {
                "task": part["item_id"].to_numpy(),
                "worker": part["rater_id"].to_numpy(),
                "label": part["answer"].to_numpy(),
            }
        )
        if kind == "ordinal":
            frame = frame[frame["label"] != "invalid"].reset_index(drop=True)
        elif kind == "tags":
            frame["label"] = [a.split("|") if a else [] for a in frame["label"]]
        else:
            frame["label"] = frame["label"].astype(float)
        inputs[question] = (kind, frame)
    return inputs


def run_crowdkit(inputs: dict[str, tuple[str, pd.DataFrame]]) -> dict[str, pd.Series]:
    from crowdkit.aggregation import BinaryRelevance, MajorityVote

    labels = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for question, (kind, frame) in inputs.items():
            if kind == "ordinal":
                labels[question] = MajorityVote().fit_predict(frame)
            elif kind == "tags":
                labels[question] = BinaryRelevance(MajorityVote()).fit_predict(frame)
            else:
                labels[question] = frame.groupby("task")["label"].mean()
    return labels


def run_crowdkit_from_file(csv: Path) -> dict[str, pd.Series]:
    """The same crowd-kit aggregation from the CSV file, as a crowd-kit user would run
    it: pandas reads the file (ids and answers as text), the answers are put into
    crowd-kit's format (tags split into lists, abstentions dropped), then aggregated.
    No alpha, no checks and no output file, still."""
    answers = pd.read_csv(csv, dtype=str, keep_default_na=False)
    return run_crowdkit(crowdkit_inputs(answers))


def run_ours(csv: Path, out: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        code = quality_main(["labels", str(csv), "--out", str(out)])
    if code != 0:
        raise SystemExit(f"python -m quality labels failed with exit code {code}")


def run_analyse(answers: pd.DataFrame) -> None:
    analyse(answers=answers, settings=LabelSettings())


def best_time(repeats: int, function, *args) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


def check_identical(out: Path, theirs: dict[str, pd.Series]) -> dict[str, int]:
    """Compare what ours wrote with crowd-kit's labels; returns units compared per kind."""
    ours = pd.read_csv(
        out / "labels.csv", dtype={"item_id": str, "value": str}, keep_default_na=False
    )
    checked = {"score": 0, "ordinal": 0, "tags": 0}
    for question, part in ours.groupby("question", sort=False):
        kind = part["kind"].iloc[0]
        expected = theirs[question]
        if kind == "score":
            mine = part["value"].astype(float).to_numpy()
            reference = expected.loc[part["item_id"]].to_numpy()
            assert np.allclose(mine, reference, rtol=1e-12, atol=0), question
            checked["score"] += len(part)
        elif kind == "ordinal":
            decided = part[part["status"] == "ok"]
            reference = expected.loc[decided["item_id"]].astype(str).to_numpy()
            assert (decided["value"].to_numpy() == reference).all(), question
            checked["ordinal"] += len(decided)
        else:
            reference = expected.loc[part["item_id"]].map(lambda kept: "|".join(sorted(kept)))
            assert (part["value"].to_numpy() == reference.to_numpy()).all(), question
            checked["tags"] += len(part)
    return checked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="6,000 videos, one repeat")
    args = parser.parse_args()
    videos = 6_000 if args.quick else 60_000
    repeats = 1 if args.quick else 3
    answers = synthetic_answers(videos)
    with tempfile.TemporaryDirectory(prefix="bench-labels-") as folder:
        csv = Path(folder) / "answers.csv"
        answers.to_csv(csv, index=False)
        inputs = crowdkit_inputs(answers)
        # As text, the way the web service passes its answers (read_answers_csv gives
        # categoricals, which analyse numbers faster).
        in_memory = read_answers_csv(path=csv).astype({column: "str" for column in ANSWER_COLUMNS})
        out = Path(folder) / "out"
        # Imports (crowd-kit pulls in scikit-learn) and first calls outside the timings.
        run_ours(csv, Path(folder) / "warm")
        run_crowdkit(crowdkit_inputs(answers.iloc[:3000]))
        ours_s, _ = best_time(repeats, run_ours, csv, out)
        analyse_s, _ = best_time(repeats, run_analyse, in_memory)
        theirs_s, theirs = best_time(repeats, run_crowdkit, inputs)
        theirs_file_s, _ = best_time(repeats, run_crowdkit_from_file, csv)
        checked = check_identical(out, theirs)
        summary_json = json.loads((out / "summary.json").read_text())
    ratio, compute_ratio = theirs_s / ours_s, theirs_s / analyse_s
    file_ratio = theirs_file_s / ours_s
    print(f"{'answers':>9}  {'ours':<34}{'s':>7}{'crowd-kit s':>13}{'ratio':>8}")
    for name, seconds, baseline, r in [
        ("whole command (CSV in, files out)", ours_s, theirs_s, ratio),
        ("analyse() on the table in memory", analyse_s, theirs_s, compute_ratio),
        ("whole command, crowd-kit from CSV", ours_s, theirs_file_s, file_ratio),
    ]:
        print(f"{len(answers):>9}  {name:<34}{seconds:>7.2f}{baseline:>13.2f}{r:>7.1f}x")
    print(
        f"identical labels: {checked['tags']} tags, {checked['ordinal']} ordinal (strict "
        f"winner), {checked['score']} score units"
    )
    print(
        json.dumps(
            {
                "bench": "labels",
                "quick": args.quick,
                "answers": len(answers),
                "videos": videos,
                "ours_command_s": round(ours_s, 3),
                "ours_analyse_s": round(analyse_s, 3),
                "crowdkit_s": round(theirs_s, 3),
                "crowdkit_from_csv_s": round(theirs_file_s, 3),
                "ratio": round(ratio, 1),
                "compute_ratio": round(compute_ratio, 1),
                "from_csv_ratio": round(file_ratio, 1),
                "checked_units": checked,
                "ties": sum(q["tie"] for q in summary_json["questions"].values()),
            }
        )
    )


if __name__ == "__main__":
    main()
