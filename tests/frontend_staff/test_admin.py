"""The Django admin as docs/admins.md describes it: every setting editable, lists cheap."""

import os
import re
from html.parser import HTMLParser

import pytest
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Payment, Study
from tests.annotation.rater_fixtures import (
    answer,
    onboard,
    qualification_ratings,
    rater_client,
    tiny_study,
)
from tests.factories import UserFactory, make_study

pytestmark = pytest.mark.django_db
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the browser test's ORM calls


def test_every_study_setting_is_in_the_admin_form():
    # given: the fields an admin sets (not the ones the system keeps)
    editable = {
        field.name
        for field in Study._meta.get_fields()
        if getattr(field, "editable", False) and not field.auto_created
    } - {"created_at"}
    # when
    in_form = {
        name for _, options in admin.site._registry[Study].fieldsets for name in options["fields"]
    }
    # then
    assert editable - in_form == set()


def test_the_study_form_shows_the_raters_wanted_per_video(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    study = tiny_study().study
    body = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    assert 'name="target_raters_per_stimulus"' in body


@pytest.mark.parametrize(
    ("design", "field", "absent"),
    [
        ("preference", "preference-0-judgments_per_pair", "ranking-0-ties_allowed"),
        ("ranking", "ranking-0-ties_allowed", "preference-0-judgments_per_pair"),
    ],
)
def test_a_studys_design_settings_are_in_its_admin_page(client, design, field, absent):
    from tests.annotation.design_fixtures import tiny_of

    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    study = tiny_of(design).study
    body = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    assert f'name="{field}"' in body
    assert f'name="{absent}"' not in body


@pytest.mark.parametrize("answered", [False, True], ids=["no-answers", "answered"])
def test_the_scale_is_fixed_once_a_study_has_answers(client, answered):
    # given: a study, rated once or not at all
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    tiny = tiny_study()
    if answered:
        rate(tiny, raters=1, answers=1)
    url = f"/admin/annotation/study/{tiny.study.pk}/change/"
    # when
    body = client.get(url).content.decode()
    # then: the scale is an input only while no answer was given on it
    for field in ("slider_min", "slider_max", "slider_step"):
        assert (f'name="{field}"' in body) == (not answered)


def rate(tiny, raters: int, answers: int) -> None:
    for _ in range(raters):
        client, _ = rater_client()
        onboard(client, tiny)
        for _ in range(answers):
            item = client.get(tiny.base + "next/").json()["item"]["id"]
            client.post(tiny.base + "answers/", answer(item), format="json")


LIST_PAGES = [
    "/admin/annotation/answer/",
    "/admin/annotation/item/",
    "/admin/annotation/assignment/",
    "/admin/annotation/participation/",
    "/admin/annotation/rater/",
    "/admin/annotation/payment/",
    "/admin/annotation/session/",
]


def list_queries(client) -> dict[str, int]:
    counts = {}
    for url in LIST_PAGES:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        counts[url] = len(queries)
    return counts


def test_list_pages_take_as_many_queries_for_many_rows_as_for_one(client):
    # given: one rater's rows
    tiny = tiny_study(rest_every=0)
    rate(tiny, raters=1, answers=6)
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    one = list_queries(client)
    # when: three more raters, each finishing their session (a payment each)
    rate(tiny, raters=3, answers=8)
    assert Payment.objects.count() == 3 and qualification_ratings().count() == 24
    many = list_queries(client)
    # then: the rows' related objects come with the list, not one query per row
    assert many == one


def test_the_admin_needs_a_superuser_or_model_permissions(client):
    # docs: a staff user without permissions reaches /admin/ but no model in it
    client.force_login(UserFactory(is_staff=True))
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/annotation/study/").status_code == 403
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    assert client.get("/admin/annotation/study/").status_code == 200


# --- questionnaire questions and the experts' answers ------------------------------------


def _question_form(question, **changes) -> dict:
    import json

    data = {
        "kind": question.kind,
        "group": question.group,
        "scale_min": question.scale_min,
        "scale_max": question.scale_max,
        "scale_step": question.scale_step,
        "options": json.dumps(question.options),
        "multiple": "on" if question.multiple else "",
        "invalid_option": "on" if question.invalid_option else "",
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v != ""}


def _first_answer(tiny):
    from annotation.models import Answer, Item, Participation

    _, user = rater_client()
    participation = Participation.objects.create(rater=user.rater, study=tiny.study)
    item = Item.objects.filter(study=tiny.study, role="stimulus").first()
    return Answer.objects.create(item=item, participation=participation, attempt=1)


def test_a_question_the_experts_answers_no_longer_fit_is_refused(client):
    import json

    from annotation.models import Question
    from tests.annotation.design_fixtures import tiny_questionnaire_study

    # given: experts answered level 3 of object_text on six videos
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    tiny = tiny_questionnaire_study()
    question = Question.objects.get(dimension__study=tiny.study, dimension__key="object_text")
    url = f"/admin/annotation/question/{question.pk}/change/"
    two_levels = json.dumps(question.options[:2])
    # when: level 3 is taken away, or the question becomes a tag group
    dropped = client.post(url, _question_form(question, options=two_levels))
    retyped = client.post(url, _question_form(question, kind="tags", invalid_option=""))
    # then: both refused, naming a video and why; the question is as it was
    for response in (dropped, retyped):
        assert response.status_code == 200
        assert "no longer fit it" in response.content.decode()
    assert "must be one of its levels [1, 2]" in dropped.content.decode()
    assert "needs a list of tags" in retyped.content.decode()
    question.refresh_from_db()
    assert (question.kind, len(question.options)) == ("ordinal", 3)
    # and: a change the answers still fit (a fourth level) is saved
    four = json.dumps([*question.options, {"value": 4, "label": "Beyond"}])
    assert client.post(url, _question_form(question, options=four)).status_code == 302
    question.refresh_from_db()
    assert [o["value"] for o in question.options] == [1, 2, 3, 4]
    # and: once the study has answers, the question is shown, not changed
    _first_answer(tiny)
    assert client.post(url, _question_form(question, options=two_levels)).status_code == 403
    assert "its answers name this question" in client.get(url).content.decode()


def test_the_experts_answers_are_fixed_once_the_study_has_answers(client):
    from annotation.models import ExpertLabel
    from tests.annotation.design_fixtures import tiny_questionnaire_study

    # given: a questionnaire study with expert answers, before and after a first answer
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    tiny = tiny_questionnaire_study()
    label = ExpertLabel.objects.filter(stimulus__study=tiny.study, dimension__key="overall").first()
    url = f"/admin/annotation/expertlabel/{label.pk}/change/"
    form = {"stimulus": label.stimulus_id, "dimension": label.dimension_id, "note": "why"}
    assert client.post(url, {**form, "value": "6"}).status_code == 302  # no answers yet
    label.refresh_from_db()
    assert label.value == 6.0
    _first_answer(tiny)
    # when: an admin edits, deletes or adds an expert answer
    page = client.get(url).content.decode()
    edited = client.post(url, {**form, "value": "2"})
    deleted = client.post(f"/admin/annotation/expertlabel/{label.pk}/delete/", {"post": "yes"})
    added = client.post(
        "/admin/annotation/expertlabel/add/",
        {**form, "stimulus": tiny.golden[0].pk, "dimension": label.dimension_id, "value": "5"},
    )
    # then: the gates' answers stay as they were, and the page says why
    assert 'name="value"' not in page  # shown, not editable
    assert "This study has answers: its qualification and golden gates" in page
    assert edited.status_code == 403
    assert deleted.status_code == 403
    assert "can no longer change" in added.content.decode()
    label.refresh_from_db()
    assert label.value == 6.0
    assert ExpertLabel.objects.filter(stimulus__study=tiny.study).count() == 18
    # but an exemplar's (a tutorial video's), which decides no gate, is still mended
    shown = ExpertLabel.objects.filter(
        stimulus__study=tiny.study, stimulus__role="tutorial", dimension__key="overall"
    ).first()
    url = f"/admin/annotation/expertlabel/{shown.pk}/change/"
    form = {"stimulus": shown.stimulus_id, "dimension": shown.dimension_id, "note": "mended"}
    assert client.post(url, {**form, "value": "7"}).status_code == 302
    shown.refresh_from_db()
    assert (shown.value, shown.note) == (7.0, "mended")


def test_a_worked_example_s_note_is_mended_in_the_admin_but_not_its_choice(client):
    from annotation.models import Dimension, ExpertLabel, Stimulus
    from tests.annotation.design_fixtures import tiny_preference_study
    from tests.factories import StimulusFactory

    # given: a running preference study's worked example, its note misspelt
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    tiny = tiny_preference_study()
    best = StimulusFactory(study=tiny.study, role=Stimulus.Role.TUTORIAL, content="e1")
    question = Dimension.objects.get(study=tiny.study)
    label = ExpertLabel.objects.create(
        stimulus=best, dimension=question, value="best", note="The othr one is blurred."
    )
    url = f"/admin/annotation/expertlabel/{label.pk}/change/"
    form = {"stimulus": best.pk, "dimension": question.pk, "value": '"best"'}
    _first_answer(tiny)  # a worked example decides no gate: it stays editable
    # when: an admin mends the note, then tries to change the choice
    mended = client.post(url, {**form, "note": "The other one is blurred."})
    changed = client.post(url, {**form, "value": '"worst"', "note": "x"})
    # then: the note is mended; the choice is the manifest's
    assert mended.status_code == 302
    assert "not a questionnaire question" in changed.content.decode()
    label.refresh_from_db()
    assert (label.value, label.note) == ("best", "The other one is blurred.")


def test_every_editable_design_setting_is_in_its_admin_box():
    from annotation.admin.study_inlines import DESIGN_INLINES

    for inline in DESIGN_INLINES.values():
        if inline.fields is None:  # Django shows every editable field
            continue
        editable = {
            field.name
            for field in inline.model._meta.get_fields()
            if getattr(field, "editable", False) and not field.auto_created
        } - {inline.fk_name or "study"}
        assert editable - set(inline.fields) == set(), inline.__name__


class _Form(HTMLParser):
    """The fields of the admin page's form with their default values, as a browser
    submits them untouched (checked boxes, selected options, inputs' values)."""

    def __init__(self):
        super().__init__()
        self.data, self._select, self._textarea = {}, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") not in ("submit", "file"):
            if attrs.get("type") != "checkbox":
                self.data[name] = attrs.get("value", "")
            elif "checked" in attrs:
                self.data[name] = attrs.get("value", "on")
        elif tag == "select":
            self._select = name
        elif tag == "option" and self._select and "selected" in attrs:
            self.data[self._select] = attrs.get("value", "")
        elif tag == "textarea":
            self._textarea = name
            self.data[name] = ""

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data


def admin_form(client, url: str) -> dict:
    form = _Form()
    form.feed(client.get(url).content.decode())
    return {name: value for name, value in form.data.items() if "__prefix__" not in name}


@pytest.mark.parametrize(
    ("design", "keys"),
    [
        ("slider", ["subject", "completeness", "interaction"]),
        ("preference", ["video_quality"]),
        ("ranking", ["aesthetics", "text_consistency"]),
        ("propose_verify", ["propose", "verify"]),
    ],
)
def test_a_study_added_in_the_admin_gets_its_designs_questions(client, design, keys):
    # given: the add form, as an admin fills it in (no dimension of their own)
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    data = admin_form(client, "/admin/annotation/study/add/")
    data.update(name="Admin-made", slug="admin-made", design=design)
    # when
    response = client.post("/admin/annotation/study/add/", data)
    # then: the design's dimensions, as study_create gives them
    assert response.status_code == 302, re.findall(r"errorlist.{0,300}", response.content.decode())
    study = Study.objects.get(slug="admin-made")
    assert list(study.dimensions.order_by("order").values_list("key", flat=True)) == keys
    # when: the design changes before any video is imported
    data = admin_form(client, f"/admin/annotation/study/{study.pk}/change/")
    data["design"] = "ranking" if design != "ranking" else "preference"
    assert client.post(f"/admin/annotation/study/{study.pk}/change/", data).status_code == 302
    # then: the new design's dimensions replace the old design's defaults
    expected = ["aesthetics", "text_consistency"] if design != "ranking" else ["video_quality"]
    assert list(study.dimensions.order_by("order").values_list("key", flat=True)) == expected


def test_dimensions_an_admin_gives_with_a_new_study_are_kept(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    data = admin_form(client, "/admin/annotation/study/add/")
    data.update(name="Own", slug="own", design="slider")
    data["dimensions-TOTAL_FORMS"] = "1"
    own = {"key": "sharpness", "label": "Sharpness", "order": "1", "anchor_low": "blurred",
           "anchor_high": "sharp"}  # fmt: skip
    data.update({f"dimensions-0-{name}": value for name, value in own.items()})
    response = client.post("/admin/annotation/study/add/", data)
    assert response.status_code == 302, re.findall(r"errorlist.{0,300}", response.content.decode())
    study = Study.objects.get(slug="own")
    assert list(study.dimensions.values_list("key", flat=True)) == ["sharpness"]


def test_a_questionnaire_without_questions_cannot_be_set_running(client):
    # given: a new questionnaire study (its questions come from a question set, not yet
    # imported), saved as running
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    data = admin_form(client, "/admin/annotation/study/add/")
    data.update(name="Labels", slug="labels", design="questionnaire", state="running")
    # when
    response = client.post("/admin/annotation/study/add/", data, follow=True)
    # then: it stays a draft, and the admin is told why
    study = Study.objects.get(slug="labels")
    assert study.state == "draft"
    assert "asks no question yet, so it stays a draft: import a question set" in (
        response.content.decode()
    )
    # and: what else it lacks is said before raters arrive, not as "Started, but"
    said = [str(m) for m in response.context["messages"]]
    assert said and not [m for m in said if m.startswith("Started")]
    assert any(m.startswith("Before raters arrive: no videos to rate") for m in said)


def test_a_return_link_typed_without_a_scheme_is_kept_as_https(client):
    # given: the Prolific completion link pasted without its scheme
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    data = admin_form(client, "/admin/annotation/study/add/")
    data.update(name="Linked", slug="linked", design="slider")
    data["completion_url"] = "app.prolific.com/submissions/complete?cc=C1"
    # when
    response = client.post("/admin/annotation/study/add/", data)
    # then: raters are sent over https (Django before 6 would have stored http://)
    assert response.status_code == 302, re.findall(r"errorlist.{0,300}", response.content.decode())
    study = Study.objects.get(slug="linked")
    assert study.completion_url == "https://app.prolific.com/submissions/complete?cc=C1"


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("golden_gate_plcc", "1.5", "Ensure this value is less than or equal to 1"),
        ("qualification_pass_share", "2", "Ensure this value is less than or equal to 1"),
        ("payment_per_session", "-3", "Ensure this value is greater than or equal to 0"),
        ("slider_max", "-5", "The slider&#x27;s minimum must be below its maximum."),
    ],
)
def test_the_study_form_says_which_number_is_out_of_range(client, field, value, says):
    # given: a study's change form
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    study = make_study()
    url = f"/admin/annotation/study/{study.pk}/change/"
    data = admin_form(client, url)
    data[field] = value
    # when
    response = client.post(url, data)
    # then: the form again, saying why in words (not "Constraint ... is violated"), and
    # nothing saved
    page = response.content.decode()
    assert response.status_code == 200 and says in page
    assert "is violated" not in page
    study.refresh_from_db()
    assert str(getattr(study, field)) != value


def test_the_study_page_gives_the_marketplace_link_with_its_placeholders(client):
    # given
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    study = make_study()
    # when
    page = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    # then: the whole link to paste into Prolific, at the address the admin uses, the
    # study's own token in it
    link = (
        f"http://testserver/r/{study.slug}/?token={study.entry_token}&amp;PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"
    )
    assert link in page


def test_the_study_page_warns_of_golden_videos_without_expert_scores(client):
    from annotation.models import ExpertScore, Stimulus
    from tests.factories import StimulusFactory

    # given: a slider study's golden video scored on every dimension, and one on none
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    study = make_study()
    scored, unscored = StimulusFactory.create_batch(2, study=study, role=Stimulus.Role.GOLDEN)
    for dimension in study.dimensions.all():
        ExpertScore.objects.create(stimulus=scored, dimension=dimension, mean=50, sigma=10)
    unscored.original_name = "golden-7.mp4"
    unscored.save()
    # when
    page = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    # then: named, with what it costs and where to mend it
    assert "1 golden or qualification video(s) lack the experts&#x27; score" in page
    assert "(golden-7.mp4)" in page
    # and once scored, nothing is said
    for dimension in study.dimensions.all():
        ExpertScore.objects.create(stimulus=unscored, dimension=dimension, mean=50, sigma=10)
    page = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    assert "lack the experts" not in page


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_study_page_fits_a_laptops_window(live_server, browser):
    # given: a study with its dimensions, an admin signed in, a 1280 px wide window
    from django.test import Client

    from tests.live_requests import close_context

    study = make_study()
    dimensions = study.dimensions.count()
    signed = Client()
    signed.force_login(UserFactory(is_staff=True, is_superuser=True))
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.add_cookies(
        [{"name": "sessionid", "value": signed.cookies["sessionid"].value, "url": live_server.url}]
    )
    try:
        page = context.new_page()
        # when
        page.goto(f"{live_server.url}/admin/annotation/study/{study.pk}/change/")
        # then: the dimensions' table is there and the page does not scroll sideways
        assert page.locator("#dimensions-group tr.has_original").count() == dimensions
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    finally:
        close_context(context)


def test_a_video_deleted_in_the_admin_takes_its_items_and_raters_go_on(client):
    # given: a running study split into a session, one of its videos not yet answered
    from annotation.models import Item, SessionItem, Stimulus

    tiny = tiny_study(rest_every=0)
    video = Stimulus.objects.filter(study=tiny.study, role=Stimulus.Role.STIMULUS).first()
    item = Item.objects.get(members__stimulus=video)
    places = SessionItem.objects.filter(session__study=tiny.study).count()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    url = f"/admin/annotation/stimulus/{video.pk}/delete/"
    # then: the confirmation names the item that goes with it
    assert f"Item: {item}" in client.get(url).content.decode()
    # when
    assert client.post(url, {"post": "yes"}).status_code == 302
    # then: the video, its item and its place in the session are gone
    assert not Stimulus.objects.filter(pk=video.pk).exists()
    assert not Item.objects.filter(pk=item.pk).exists()
    assert SessionItem.objects.filter(session__study=tiny.study).count() == places - 1
    # and: a rater is served the session's other items (before: a 500 on the orphan)
    rater, _ = rater_client()
    onboard(rater, tiny)
    served = []
    while body := rater.get(tiny.base + "next/").json()["item"]:
        served.append(body["id"])
        assert (
            rater.post(tiny.base + "answers/", answer(body["id"]), format="json").status_code == 201
        )
    assert len(served) == places - 1 and str(item.public_id) not in served


def answered_video():
    """(the answered item's public id, its video): the first a new rater answered."""
    from annotation.models import Item

    tiny = tiny_study()
    rater, _ = rater_client()
    onboard(rater, tiny)
    body = rater.get(tiny.base + "next/").json()["item"]
    assert rater.post(tiny.base + "answers/", answer(body["id"]), format="json").status_code == 201
    return body, Item.objects.get(public_id=body["id"]).members.get().stimulus


def test_an_answered_video_is_not_deleted_and_the_admin_says_why(client):
    # given: a video a rater has rated
    from annotation.models import Answer, Stimulus

    body, video = answered_video()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    url = f"/admin/annotation/stimulus/{video.pk}/delete/"
    # when
    page = client.get(url).content.decode()
    client.post(url, {"post": "yes"})
    # then: the page names the answered item that keeps it, and nothing is deleted
    assert "(it has answers)" in page
    assert Stimulus.objects.filter(pk=video.pk).exists()
    assert Answer.objects.filter(item__public_id=body["id"]).count() == 1


def test_deleting_videos_refuses_all_while_one_has_an_answer():
    from annotation.errors import Conflict
    from annotation.models import Answer, Stimulus
    from annotation.services.stimulus_delete import stimuli_delete

    tiny = tiny_study()
    rater, _ = rater_client()
    onboard(rater, tiny)
    body = rater.get(tiny.base + "next/").json()["item"]
    rater.post(tiny.base + "answers/", answer(body["id"]), format="json")
    # every video but the qualification test's (answered too): the session's first item,
    # regular or golden, is the one answered among them
    videos = Stimulus.objects.filter(study=tiny.study).exclude(role=Stimulus.Role.QUALIFICATION)
    count = videos.count()
    with pytest.raises(Conflict, match="1 item"):
        stimuli_delete(stimuli=videos)
    assert videos.count() == count and Answer.objects.filter(item__public_id=body["id"]).exists()


def serve_all(rater, tiny) -> list[str]:
    """Answer whatever the rater is served until nothing is left; the item ids served."""
    served = []
    while body := rater.get(tiny.base + "next/").json()["item"]:
        served.append(body["id"])
        posted = rater.post(tiny.base + "answers/", answer(body["id"]), format="json")
        assert posted.status_code == 201, posted.content
    return served


def test_a_video_deleted_from_a_rater_s_session_leaves_their_order_and_they_go_on():
    # given: a rater who has answered the first item of their session
    from annotation.models import Assignment, Item, Stimulus
    from annotation.services.stimulus_delete import stimuli_delete

    tiny = tiny_study(rest_every=0)
    rater, _ = rater_client()
    onboard(rater, tiny)
    first = rater.get(tiny.base + "next/").json()["item"]["id"]
    assert rater.post(tiny.base + "answers/", answer(first), format="json").status_code == 201
    assignment = Assignment.objects.get()
    order = list(assignment.order)
    later = Item.objects.get(pk=order[3])
    # when: the admin deletes a video further on in their order
    stimuli_delete(stimuli=Stimulus.objects.filter(pk=later.members.get().stimulus_id))
    # then: the rater answers every other item and the session ends (before: their
    # answer to the item after it was taken for the deleted one's, a 500)
    served = serve_all(rater, tiny)
    assert len(served) == len(order) - 2 and str(later.public_id) not in served
    assignment.refresh_from_db()
    assert assignment.state == Assignment.State.FINISHED
    assert assignment.order == [pk for pk in order if pk != later.pk]


def test_deleting_the_last_video_a_session_had_left_ends_it_with_its_payment():
    from annotation.models import Assignment, Item, Payment, Stimulus
    from annotation.services.stimulus_delete import stimuli_delete

    tiny = tiny_study(rest_every=0)
    rater, _ = rater_client()
    onboard(rater, tiny)
    assignment = None
    while True:
        body = rater.get(tiny.base + "next/").json()["item"]
        assignment = Assignment.objects.get()
        if assignment.position == len(assignment.order) - 1:
            break
        assert rater.post(tiny.base + "answers/", answer(body["id"]), format="json").status_code
    last = Item.objects.get(public_id=body["id"])
    stimuli_delete(stimuli=Stimulus.objects.filter(pk=last.members.get().stimulus_id))
    assignment.refresh_from_db()
    assert assignment.state == Assignment.State.FINISHED
    assert Payment.objects.filter(assignment=assignment).exists()
    assert rater.get(tiny.base + "next/").json()["item"] is None


def test_a_video_deleted_from_a_rater_s_qualification_test_leaves_the_attempt():
    # given: a rater who answered the first of their test's two items
    from annotation.models import Item, Participation, Stimulus
    from annotation.services.stimulus_delete import stimuli_delete
    from tests.annotation.rater_fixtures import consent_and_tutorial

    tiny = tiny_study(rest_every=0)
    rater, _ = rater_client()
    consent_and_tutorial(rater, tiny)
    first = rater.get(tiny.base + "next/").json()["item"]["id"]
    assert rater.post(tiny.base + "answers/", answer(first, 52.0), format="json").status_code == 201
    participation = Participation.objects.get()
    (other,) = [pk for pk in participation.qualification_set["items"]
                if pk != Item.objects.get(public_id=first).pk]  # fmt: skip
    # when: the other's video is deleted
    stimuli_delete(stimuli=Stimulus.objects.filter(memberships__item=other))
    # then: the attempt is scored on the answered one, and the rater goes on to a session
    participation.refresh_from_db()
    assert participation.qualification_state == Participation.Qualification.PASSED
    assert participation.qualification_set["items"] == [Item.objects.get(public_id=first).pk]
    assert rater.get(tiny.base + "next/").json()["item"]["id"] != first


def test_an_answer_arriving_after_the_delete_confirmation_keeps_the_video(client, monkeypatch):
    # given: an answered video whose confirmation page was shown before the answer came
    from annotation.models import Stimulus
    from annotation.services import stimulus_delete

    _, video = answered_video()
    monkeypatch.setattr(
        type(admin.site._registry[Stimulus]),
        "get_deleted_objects",
        lambda self, objs, request: ([str(video)], {}, set(), []),
    )  # the confirmation saw no answer
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    # when: the deletion is confirmed, one video and then the list's action
    one = client.post(f"/admin/annotation/stimulus/{video.pk}/delete/", {"post": "yes"})
    listed = client.post(
        "/admin/annotation/stimulus/",
        {"action": "delete_selected", "_selected_action": [video.pk], "post": "yes"},
        follow=True,
    )
    # then: refused with the reason, not a server error, and the video stays
    assert one.status_code == 302 and one.url.endswith(f"/stimulus/{video.pk}/change/")
    assert "Not deleted: 1 item(s) made of these videos have answers" in listed.content.decode()
    assert Stimulus.objects.filter(pk=video.pk).exists()
    assert stimulus_delete.answered_items(Stimulus.objects.filter(pk=video.pk)).exists()


def test_a_playback_report_outlives_the_video_deleted_to_be_replaced():
    # given: a rater whose browser could not play a video, and skipped it
    from annotation.models import Item, PlaybackReport, Stimulus
    from annotation.services.stimulus_delete import stimuli_delete

    tiny = tiny_study(rest_every=0)
    rater, _ = rater_client()
    onboard(rater, tiny)
    body = rater.get(tiny.base + "next/").json()["item"]
    report = {"item": body["id"], "detail": "MediaError 4"}
    assert rater.post(tiny.base + "problems/", report, format="json").status_code == 201
    video = Item.objects.get(public_id=body["id"]).members.get().stimulus
    # when: the admin deletes it, to upload it again
    stimuli_delete(stimuli=Stimulus.objects.filter(pk=video.pk))
    # then: the report is kept, naming the video it was about
    kept = PlaybackReport.objects.get()
    named = video.original_name or str(video.public_id)
    assert (kept.item, kept.videos, kept.detail) == (None, named, "MediaError 4")
    # and the rater's session goes on without it
    assert len(serve_all(rater, tiny)) > 0
