"""Benchmark: the admin's live monitor, the progress API and the adaptive-collection review
at GAIA scale, against the obvious code, in the same run.

A study of GAIA's shape in a fresh PostgreSQL database: 9,180 videos in 31 sessions of
300, each session finished by 35 of 54 raters on 3 dimensions (325,000 answers, 975,000
ratings), written straight into the tables. Then, best of N:

- floor: one scan of the study's answers (``COUNT(*)`` joined to their items), the
  least any figure over every answer costs;
- project: ``study_monitor`` (one row per assignment plus progress) and
  ``study_progress`` (what ``/api/studies/<slug>/progress/`` answers);
- baseline: the monitor as written the obvious way, and as MOSaic had it: the
  assignments annotated with their answers' first and last time (``Min``/``Max`` over
  ``answers__received_at``, which groups every assignment column, its item order too),
  then one count of the regular answers and one of the last hour's.
- adaptive review (``adaptive_review`` with adaptive collection on, every minute and at
  every session's end): the whole review, and its pivot of the million ratings into
  each video's scores (``scores_by_video``, numpy) against the same pivot written with
  dicts and lists, as MOSaic had it.

The figures are checked equal (rows and progress), ratios are printed, and the last
line is one JSON object.

    .venv/bin/python bench/monitor.py [--quick] [--repeats 5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DB_NAME = "mosaic_bench_monitor"
SERVER = ("-h", "127.0.0.1", "-U", "postgres")


def setup_django() -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DB_NAME}",
        MOSAIC_VAR_DIR="/tmp/mosaic-bench-monitor",
    )
    import django

    django.setup()


def build(*, sessions: int, raters_per_session: int, pool: int) -> None:
    """The study, written straight into the tables (the rater flow is measured by
    bench/load.py)."""
    import numpy as np
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from annotation.models import (
        Answer,
        Assignment,
        Participation,
        Rater,
        Rating,
        SessionItem,
        Stimulus,
        Study,
    )
    from annotation.services.studies import study_build_sessions, study_create

    call_command("migrate", verbosity=0)
    study = study_create(
        name="GAIA scale",
        slug="gaia-scale",
        state=Study.State.RUNNING,
        session_size=300,
        golden_per_session=0,
        qualification_size=0,
    )
    videos = sessions * 300 - (120 if sessions == 31 else 0)  # GAIA: 9,180
    Stimulus.objects.bulk_create(
        [
            Stimulus(
                study=study,
                checksum=hashlib.sha256(str(i).encode()).hexdigest(),
                source_file=f"sources/{i}.mp4",
                rendition=f"renditions/{i}.mp4",
                status=Stimulus.Status.READY,
                prompt="A girl arranges daisies.",
                action="Arranging Flowers",
            )
            for i in range(videos)
        ],
        batch_size=5000,
    )
    users = User.objects.bulk_create(User(username=f"rater{i}") for i in range(pool))
    raters = Rater.objects.bulk_create(Rater(user=u) for u in users)
    now = timezone.now()
    participations = Participation.objects.bulk_create(
        Participation(
            rater=r, study=study, consent_at=now, tutorial_done_at=now, qualification_state="passed"
        )
        for r in raters
    )
    dimensions = list(study.dimensions.order_by("order"))
    rng = np.random.default_rng(1)
    for session in study_build_sessions(study=study):
        items = list(
            SessionItem.objects.filter(session=session).values_list(
                "item_id", "item__members__stimulus_id", "item__members__stimulus__public_id"
            )
        )
        chosen = rng.choice(pool, raters_per_session, replace=False)
        assignments = Assignment.objects.bulk_create(
            Assignment(
                rater=raters[r],
                session=session,
                order_seed=0,
                order=[item for item, _, _ in items],
                position=len(items),
                state=Assignment.State.FINISHED,
                finished_at=now,
                golden_agreement=0.9,
                eligible_for_next=True,  # passed the golden gate: its ratings count
            )
            for r in chosen
        )
        answers = Answer.objects.bulk_create(
            [
                Answer(
                    client_uuid=uuid.uuid4(),
                    item_id=item,
                    participation=participations[r],
                    assignment=assignment,
                    layout=[str(public_id)],
                    values_digest="0" * 64,
                )
                for assignment, r in zip(assignments, chosen, strict=True)
                for item, _, public_id in items
            ],
            batch_size=5000,
        )
        scores = rng.integers(0, 101, (len(answers), len(dimensions)))
        Rating.objects.bulk_create(
            [
                Rating(
                    answer=answer,
                    stimulus_id=items[n % len(items)][1],
                    dimension=dimension,
                    score=float(scores[n, d]),
                )
                for n, answer in enumerate(answers)
                for d, dimension in enumerate(dimensions)
            ],
            batch_size=10000,
        )
    # received_at is set on creation (auto_now_add): the answers are spread over the
    # last three hours afterwards, a third in the last hour, none within 10 minutes of
    # its edge (each method reads its own "now")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE annotation_answer SET received_at = now() - CASE WHEN random() < 0.3 "
            "THEN random() * interval '50 minutes' "
            "ELSE interval '70 minutes' + random() * interval '110 minutes' END"
        )
        cursor.execute("ANALYZE")


def obvious_monitor(study) -> dict:
    """The monitor's figures as MOSaic computed them before: the assignments annotated
    with their answers' times, then two counts."""
    from django.db.models import Max, Min
    from django.utils import timezone

    from annotation.models import Answer, Assignment, Item

    assignments = list(
        Assignment.objects.filter(session__study=study)
        .select_related("rater", "session")
        .annotate(first_answer=Min("answers__received_at"), last_answer=Max("answers__received_at"))
        .order_by("session__index", "started_at")
    )
    regular = Answer.objects.filter(
        item__study=study, item__role=Item.Role.STIMULUS, assignment__isnull=False
    )
    recent = regular.filter(received_at__gte=timezone.now() - timedelta(hours=1)).count()
    paces = {}
    for a in assignments:
        span = (a.last_answer - a.first_answer).total_seconds()
        paces[a.pk] = round(span / (a.position - 1), 1)
    return {"paces": paces, "answers": regular.count(), "answers_last_hour": recent}


def plain_pivot(study, rows) -> dict:
    """``scores_by_video`` written the plain way: a dict of answers, then of videos."""
    import numpy as np

    dimensions = list(study.dimensions.order_by("order").values_list("pk", flat=True))
    column = {pk: index for index, pk in enumerate(dimensions)}
    answers: dict[int, tuple[int, list[float]]] = {}
    for answer_id, video, dimension, score in rows:
        entry = answers.setdefault(answer_id, (video, [np.nan] * len(column)))
        entry[1][column[dimension]] = score
    per_video: dict[int, list[list[float]]] = {}
    for video, scores in answers.values():
        if not any(np.isnan(scores)):
            per_video.setdefault(video, []).append(scores)
    return {video: np.asarray(scores, dtype=np.float64) for video, scores in per_video.items()}


def best(repeats: int, function):
    seconds, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        seconds = min(seconds, time.perf_counter() - started)
    return seconds, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sessions, per_session, pool = (4, 10, 20) if args.quick else (31, 35, 54)
    subprocess.run(["dropdb", *SERVER, "--if-exists", DB_NAME], check=True)
    subprocess.run(["createdb", *SERVER, DB_NAME], check=True)
    try:
        setup_django()
        started = time.perf_counter()
        build(sessions=sessions, raters_per_session=per_session, pool=pool)
        built_s = time.perf_counter() - started
        figures = measure(args.repeats)
        from django.db import connections

        connections.close_all()
    finally:
        subprocess.run(["dropdb", *SERVER, "--if-exists", DB_NAME])
    figures |= {"bench": "monitor", "quick": args.quick, "build_s": round(built_s, 1)}
    print(json.dumps(figures))


def measure(repeats: int) -> dict:
    from django.db import connection

    from annotation.models import Answer, Study
    from annotation.monitor import study_monitor, study_progress

    study = Study.objects.select_related("adaptive").get(slug="gaia-scale")

    def floor():
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT COUNT(*) FROM annotation_answer a JOIN annotation_item i "
                "ON a.item_id = i.id WHERE i.study_id = %s",
                [study.pk],
            )
            return cursor.fetchone()[0]

    floor_s, answers = best(repeats, floor)
    monitor_s, monitor = best(repeats, lambda: study_monitor(study=study))
    progress_s, progress = best(repeats, lambda: study_progress(study=study))
    baseline_s, baseline = best(repeats, lambda: obvious_monitor(study))
    # the same figures either way
    assert {row["id"]: row["seconds_per_stimulus"] for row in monitor["assignments"]} == (
        baseline["paces"]
    )
    for key in ("answers", "answers_last_hour"):
        assert monitor["progress"][key] == progress[key] == baseline[key], key
    assert answers == Answer.objects.count() == baseline["answers"]

    import numpy as np

    from annotation.models import Rating
    from annotation.services.adaptive import adaptive_configure, adaptive_review
    from annotation.services.adaptive_ratings import kept_answers, scores_by_video

    adaptive_configure(study=study, enabled=True)
    ratings = list(
        Rating.objects.filter(answer_id__in=kept_answers(study=study).values("pk"))
        .order_by("answer_id")
        .values_list("answer_id", "stimulus_id", "dimension_id", "score")
    )
    pivot_s, pivot = best(repeats, lambda: scores_by_video(study=study, rows=iter(ratings)))
    plain_s, plain = best(repeats, lambda: plain_pivot(study, ratings))
    assert list(pivot) == list(plain)
    assert all(np.array_equal(pivot[video], plain[video]) for video in plain)
    # a review settles nothing more once it has run: each repeat does the same work
    review_s, _ = best(repeats, lambda: adaptive_review(study=study))
    figures = {
        "answers": answers,
        "assignments": len(monitor["assignments"]),
        "floor_s": round(floor_s, 4),
        "monitor_s": round(monitor_s, 4),
        "progress_s": round(progress_s, 4),
        "obvious_monitor_s": round(baseline_s, 4),
        "speedup_monitor": round(baseline_s / monitor_s, 2),
        "speedup_progress": round(baseline_s / progress_s, 2),
        "monitor_in_floors": round(monitor_s / floor_s, 1),
        "ratings": len(ratings),
        "adaptive_review_s": round(review_s, 3),
        "pivot_s": round(pivot_s, 4),
        "plain_pivot_s": round(plain_s, 4),
        "speedup_pivot": round(plain_s / pivot_s, 1),
    }
    print(f"{answers} answers, {figures['assignments']} assignments; best of {repeats}")
    print(f"  floor (one scan of the answers)  {floor_s * 1000:8.1f} ms")
    print(f"  obvious monitor                  {baseline_s * 1000:8.1f} ms")
    print(
        f"  study_monitor                    {monitor_s * 1000:8.1f} ms  "
        f"{figures['speedup_monitor']}x faster, {figures['monitor_in_floors']} floors"
    )
    print(
        f"  study_progress                   {progress_s * 1000:8.1f} ms  "
        f"{figures['speedup_progress']}x faster"
    )
    print(f"{len(ratings)} ratings")
    print(f"  adaptive review                  {review_s * 1000:8.1f} ms")
    print(f"  its pivot, plain dicts           {plain_s * 1000:8.1f} ms")
    print(
        f"  its pivot, scores_by_video       {pivot_s * 1000:8.1f} ms  "
        f"{figures['speedup_pivot']}x faster"
    )
    return figures


if __name__ == "__main__":
    main()
