"""How the demos of the designs that compare videos (preference, ranking) are made: a
running study whose videos a manifest names, with small sessions and a short rest."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from annotation.models import Study

CONSENT = (
    "Your answers are stored under a pseudonymous id and used for research on video "
    "quality. You may stop at any time."
)


def compared_demo_create(
    *,
    slug: str,
    name: str,
    design: str,
    instructions: str,
    manifest: Path,
    configure: Callable[[Study], None],
) -> Study:
    """The demo study, its design settings set by `configure(study)`, its videos imported
    (and queued for transcoding and scoring), its sessions built, running. The caller
    holds the transaction."""
    from annotation.services.studies import study_build_sessions, study_create
    from annotation.services.study_import import study_import_manifest
    from media_pipeline.services.transcode_jobs import stimuli_enqueue_processing

    study = study_create(
        name=name,
        slug=slug,
        design=design,
        session_size=100,
        golden_per_session=2,
        rest_every=10,
        rest_seconds=30,
        qualification_size=2,
        qualification_pass_share=1.0,
        payment_per_session="2.00",
        instructions=instructions,
        consent_text=CONSENT,
    )
    configure(study)
    study_import_manifest(study=study, manifest=manifest, on_commit=stimuli_enqueue_processing)
    study_build_sessions(study=study)
    Study.objects.filter(pk=study.pk).update(state=Study.State.RUNNING)
    study.refresh_from_db()
    return study
