"""Deleting videos or a study removes their files from storage, once committed; a source
file another video still names stays."""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from annotation.errors import Conflict
from annotation.models import Stimulus, Study
from annotation.services.stimulus_delete import stimuli_delete
from tests.annotation.rater_fixtures import answer, onboard, rater_client, tiny_study
from tests.factories import StimulusFactory, UserFactory, make_study

pytestmark = pytest.mark.django_db


def transcoded(study) -> Stimulus:
    """A video with its source, rendition and poster in storage."""
    stimulus = StimulusFactory(study=study)
    stem = f"renditions/{stimulus.checksum[:2]}/{stimulus.checksum}-{stimulus.pk}"
    stimulus.rendition.save(f"{stem}.mp4", ContentFile(b"rendition"), save=False)
    stimulus.poster.save(f"{stem}.jpg", ContentFile(b"poster"), save=False)
    stimulus.save()
    return stimulus


def names(stimulus: Stimulus) -> list[str]:
    return [stimulus.source_file.name, stimulus.rendition.name, stimulus.poster.name]


def stored(paths: list[str]) -> list[bool]:
    return [default_storage.exists(name) for name in paths]


def test_a_deleted_videos_files_leave_storage_once_committed(
    django_capture_on_commit_callbacks,
):
    # given: two transcoded videos
    study = make_study()
    doomed, kept = transcoded(study), transcoded(study)
    assert stored(names(doomed)) == [True, True, True]
    # when
    with django_capture_on_commit_callbacks(execute=True):
        stimuli_delete(stimuli=Stimulus.objects.filter(pk=doomed.pk))
    # then: its source, rendition and poster are gone (before, all three stayed, and the
    # same video uploaded again was stored as a second copy); the other's stay
    assert stored(names(doomed)) == [False, False, False]
    assert stored(names(kept)) == [True, True, True]


def test_a_source_another_video_names_stays_until_the_last_goes(
    django_capture_on_commit_callbacks,
):
    # given: two segments of one long video, naming one source file
    study = make_study()
    first = transcoded(study)
    second = transcoded(study)
    own_source = second.source_file.name
    Stimulus.objects.filter(pk=second.pk).update(source_file=first.source_file.name)
    # when: the first goes
    with django_capture_on_commit_callbacks(execute=True):
        stimuli_delete(stimuli=Stimulus.objects.filter(pk=first.pk))
    # then: the shared source stays for the second, the first's rendition goes
    assert stored([first.source_file.name, first.rendition.name]) == [True, False]
    # and when the second goes too, so does the source
    default_storage.delete(own_source)
    with django_capture_on_commit_callbacks(execute=True):
        stimuli_delete(stimuli=Stimulus.objects.filter(pk=second.pk))
    assert stored([first.source_file.name, second.rendition.name]) == [False, False]


def test_a_refused_deletion_keeps_the_files(django_capture_on_commit_callbacks):
    # given: a video a rater answered
    tiny = tiny_study(rest_every=0)
    client, _ = rater_client()
    onboard(client, tiny)
    item = client.get(tiny.base + "next/").json()["item"]["id"]
    assert client.post(tiny.base + "answers/", answer(item), format="json").status_code == 201
    answered = Stimulus.objects.get(memberships__item__public_id=item)
    # when
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(Conflict):
        stimuli_delete(stimuli=Stimulus.objects.filter(pk=answered.pk))
    # then
    assert stored([answered.source_file.name]) == [True]


def test_a_study_deleted_in_the_admin_takes_its_videos_files(
    client, django_capture_on_commit_callbacks
):
    # given: a study with a transcoded video, and another study's
    study, other = make_study(), make_study()
    doomed, kept = transcoded(study), transcoded(other)
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    # when: deleted through the admin's confirmation page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/annotation/study/{study.pk}/delete/", {"post": "yes"})
    # then
    assert response.status_code == 302
    assert not Study.objects.filter(pk=study.pk).exists()
    assert stored(names(doomed)) == [False, False, False]
    assert stored(names(kept)) == [True, True, True]
