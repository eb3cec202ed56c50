"""HTML and JavaScript injection: every page that shows text somebody else wrote (study
names and texts, questions, options, prompts, rater ids, notes, reasons, vocabulary and
metric names, file names) shows it as text, never as markup.

Pages Django renders are requested with a payload stored in each field and must carry
the escaped form only; text the rater page and the monitor draw in the browser is
checked statically (no HTML sink in the modules, the fields set as textContent) and,
for the rater page, in Chromium; figures must draw labels literally (no mathtext)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

from annotation.models import (
    BatchAudit,
    Dimension,
    ExpertLabel,
    Item,
    LabelAnswer,
    Question,
    Stimulus,
    Study,
)
from quality.models import AnalysisRun
from tests.annotation.design_fixtures import tiny_of, tiny_questionnaire_study
from tests.annotation.rater_fixtures import rater_client, tiny_study
from tests.factories import UserFactory
from tests.frontend_staff.test_audits import audit_url, finished_batch, form, staff_client
from tests.live_requests import close_context

pytestmark = pytest.mark.django_db

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the browser test's ORM calls

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "</script><script>alert(1)</script>"
TEXTAREA = "</textarea><img src=x onerror=alert(2)>"
PAYLOAD = IMG + SCRIPT  # one field, both tricks
MATH = r"$\nocommand$ sharpness"  # mathtext, and a parse error, were it read as TeX

FRONTEND_JS = Path(__file__).resolve().parents[2] / "frontend" / "static" / "frontend"


def assert_escaped(body: str, *payloads: str) -> None:
    for payload in payloads:
        assert payload not in body, f"{payload!r} is live in the page"
        assert escape(payload) in body, f"{payload!r} is not shown (escaped) in the page"


def admin_client() -> Client:
    client = Client()
    boss = User.objects.filter(username="boss").first()
    client.force_login(boss or UserFactory(username="boss", is_staff=True, is_superuser=True))
    return client


def done_run(study: Study, *, summary: dict, exclusions: list | None = None, mos=None):
    return AnalysisRun.objects.create(
        study=study,
        status=AnalysisRun.Status.DONE,
        summary=summary,
        exclusions=exclusions or [],
        mos=mos or [],
        finished_at=timezone.now(),
        ratings_count=1,
    )


# --- pages with the study's name -----------------------------------------------------------


def test_the_study_name_is_text_on_every_page_that_shows_it():
    # given
    tiny = tiny_study(name=PAYLOAD)
    staff, _ = staff_client()
    rater = Client()
    rater.force_login(rater_client()[1])
    # when
    pages = {
        "home": staff.get("/"),  # a visitor not signed in sees no study names
        "studies": staff.get("/studies/"),
        "monitor": staff.get(f"/studies/{tiny.study.slug}/monitor/"),
        "results": staff.get(f"/studies/{tiny.study.slug}/results/"),
        "rater": rater.get(f"/study/{tiny.study.slug}/"),
        "admin list": admin_client().get("/admin/annotation/study/"),
        "admin page": admin_client().get(f"/admin/annotation/study/{tiny.study.pk}/change/"),
    }
    # then
    for name, response in pages.items():
        assert response.status_code == 200, name
        body = response.content.decode()
        assert IMG not in body and SCRIPT not in body, name
        assert escape(IMG) in body, name


def test_the_rater_page_hands_its_data_to_the_script_as_json_script():
    # given: the only inline data are json_script blocks; nothing the study's admins wrote
    tiny = tiny_study(name=PAYLOAD, instructions=PAYLOAD, consent_text=PAYLOAD)
    rater = Client()
    rater.force_login(rater_client()[1])
    # when
    body = rater.get(f"/study/{tiny.study.slug}/").content.decode()
    # then: one </script> per script element, and each inline one is JSON
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", body, re.S)
    assert body.count("</script>") == len(scripts)
    for attributes, text in scripts:
        if text.strip():
            assert 'type="application/json"' in attributes
    assert_escaped(body, IMG)


def test_the_sign_in_page_shows_its_next_parameter_as_text(client):
    # when
    body = client.get('/accounts/login/?next="><script>alert(1)</script>').content.decode()
    # then
    assert "<script>alert(1)" not in body
    assert 'value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in body


def test_a_refused_marketplace_link_does_not_echo_its_parameters(client):
    # given
    tiny = tiny_study()
    # when: a participant id and a token that are markup
    response = client.get(
        f"/r/{tiny.study.slug}/",
        {"token": tiny.study.entry_token, "PROLIFIC_PID": IMG, "STUDY_ID": SCRIPT},
    )
    bad_token = client.get(f"/r/{tiny.study.slug}/", {"token": IMG, "PROLIFIC_PID": "P1"})
    # then
    for refused in (response, bad_token):
        assert refused.status_code in (400, 403)
        body = refused.content.decode()
        assert IMG not in body and SCRIPT not in body
        assert "This link cannot be used" in body


# --- the expert audit pages and their admin --------------------------------------------------


def payload_questionnaire():
    """The small questionnaire study with markup in every text its pages show: the study's
    name, the questions' labels and groups, an option's label, the prompts, an expert's
    note and each comment a rater wrote."""
    tiny = tiny_questionnaire_study(name=PAYLOAD)
    Dimension.objects.filter(study=tiny.study, key="object_text").update(label=IMG + " level")
    question = Question.objects.get(dimension__study=tiny.study, dimension__key="object_text")
    question.group = SCRIPT
    question.options = [{**o, "label": f"{IMG} {o['value']}"} for o in question.options]
    question.save()
    Stimulus.objects.filter(study=tiny.study).update(prompt=PAYLOAD)
    return tiny


def test_the_audit_pages_show_questions_answers_notes_and_reasons_as_text():
    # given: a finished batch, its comments markup, an expert's note markup
    tiny = payload_questionnaire()
    batch = finished_batch(tiny, right=False)
    LabelAnswer.objects.filter(dimension__key="comment").update(text=PAYLOAD)
    client, _ = staff_client()
    client.get(audit_url(batch))
    audit = BatchAudit.objects.get()
    video = Item.objects.get(pk=audit.sample[0]).members.get().stimulus
    level = Dimension.objects.get(study=tiny.study, key="object_text")
    ExpertLabel.objects.create(stimulus=video, dimension=level, value=3, note=PAYLOAD)
    # when: the open audit, then the form sent back with a video left undecided (the
    # notes and the reason come back in their text areas), then decided
    opened = client.get(audit_url(batch)).content.decode()
    typed = {**form(audit, wrong=1, reason=TEXTAREA, skip=1)}
    typed.update({f"note-{item}": TEXTAREA + PAYLOAD for item in audit.sample})
    refused = client.post(audit_url(batch), typed)
    decided = {**form(audit, wrong=1, reason=TEXTAREA + PAYLOAD)}
    decided.update({f"note-{item}": PAYLOAD for item in audit.sample})
    assert client.post(audit_url(batch), decided).status_code == 302
    pages = {
        "open": opened,
        "refused": refused.content.decode(),
        "decided": client.get(audit_url(batch)).content.decode(),
        "queue": client.get(f"/studies/{tiny.study.slug}/audits/").content.decode(),
        "admin": admin_client().get(f"/admin/annotation/batchaudit/{audit.pk}/change/"),
        "admin labels": admin_client().get("/admin/annotation/expertlabel/"),
        "admin questions": admin_client().get("/admin/annotation/question/"),
    }
    # then
    assert refused.status_code == 400
    for name, page in pages.items():
        body = page if isinstance(page, str) else page.content.decode()
        assert IMG not in body and SCRIPT not in body, name
        assert "</textarea><img" not in body, name
        assert escape(IMG) in body, name
    assert escape(TEXTAREA) in pages["refused"]
    assert escape(PAYLOAD) in pages["decided"]  # the reason and the notes
    assert escape(IMG) + " 1" in pages["open"]  # an option's label, in the rater's answer
    assert escape(SCRIPT) in pages["open"]  # the question's group


def test_the_question_set_page_shows_an_uploaded_file_name_as_text():
    # given
    tiny = tiny_questionnaire_study(name=PAYLOAD)
    upload = SimpleUploadedFile(f"{IMG}.txt", b"questions: []")
    # when: the Studies action's second step with a file it refuses by its name
    response = admin_client().post(
        "/admin/annotation/study/",
        {
            "action": "import_questions",
            "_selected_action": [tiny.study.pk],
            "apply": "1",
            "question_file": upload,
        },
    )
    # then
    assert response.status_code == 400
    body = response.content.decode()
    assert 'id="import-error"' in body
    assert_escaped(body, IMG)


# --- the results pages ---------------------------------------------------------------------


EXCLUSIONS = [
    {
        "rule": "admin",
        "rater_id": IMG,
        "session": None,
        "reason": PAYLOAD,
        "decided_by": SCRIPT,
        "ratings": 3,
    }
]


def slider_summary() -> dict:
    return {
        "alpha": {IMG: 0.5},
        "dimension_correlation": [
            {"dimension_a": IMG, "dimension_b": SCRIPT, "n_videos": 3, "spearman": 0.1}
        ],
        "metric_agreement": {
            "rows": [{"metric": IMG, "target": SCRIPT, "srcc": 0.5, "plcc": 0.4, "n": 9}],
            "stimuli": 9,
        },
        "adaptive": {
            "plan": "obf",
            "plan_label": IMG,
            "alpha": 0.05,
            "target_half_width": 5,
            "within_target": 1,
            "videos": 2,
            "settled": 0,
            "widest": [{"video_id": IMG, "dimension": SCRIPT, "n": 3, "half_width": 4}],
        },
    }


def preference_summary() -> dict:
    row = {"question": IMG, "condition": SCRIPT, "score": 0.1, "ci95_low": 0, "ci95_high": 1}
    return {
        "model": IMG,
        "unit": SCRIPT,
        "scale": [{**row, "rank": 1, "rank_low": 1, "rank_high": 2, "n": 4}],
        "pairs": [
            {"question": IMG, "condition_a": SCRIPT, "condition_b": IMG, "n": 4, "wins_a": 2},
        ],
        "alpha": {IMG: 0.3},
        "raters": [],
    }


def ranking_summary() -> dict:
    row = {"kemeny_rank": 1, "condition": IMG, "borda": 1.0, "pl_strength": 0.2}
    return {
        "consensus": [
            {**row, "question": SCRIPT, "prompt_id": "*"},
            {**row, "question": SCRIPT, "prompt_id": IMG},
        ],
        "kendall_w": {SCRIPT: {IMG: {"w": 0.5, "chi2": 1, "p_value": 0.1, "n_rankings": 3}}},
        "rater_taus": {SCRIPT: {IMG: {"mean_tau": 0.1, "n_prompts": 2, "p_value": 0.3}}},
    }


def questionnaire_summary() -> dict:
    bins = [{"value": "hard", "label": IMG, "count": 2}]
    return {
        "distributions": [
            {"question": SCRIPT, "label": IMG, "kind": "tags", "answers": 2, "bins": bins},
            {"question": "quiet", "label": IMG, "kind": "score", "answers": 0, "bins": []},
        ],
        "tag_alpha": {SCRIPT: {"hard": 0.5}},
        "ties": [{"item_id": 1, "prompt": PAYLOAD, "question": SCRIPT, "answers": [IMG]}],
        "rater_agreement": {IMG: {"decisions": 2, "agreed": 1, "share": 0.5}},
        "audits": [
            {
                "rater_id": IMG,
                "session": 1,
                "verdict": "rejected",
                "wrong": 2,
                "checked": 3,
                "reason": PAYLOAD,
                "auditor": SCRIPT,
                "decided_at": None,
            }
        ],
    }


def propose_summary() -> dict:
    return {
        "label_counts": [
            {"action_id": 1, "action": IMG, "group": SCRIPT, "proposed": 2, "verified": 1,
             "kept": 1}
        ],
        "segments": [
            {"item_id": 5, "video_id": IMG, "keyframe": 1, "person_id": SCRIPT, "box": [0, 0, 1, 1],
             "kept": [1]}
        ],
        "verifier_accuracy": {IMG: {"verdicts": 2, "agreed": 1, "accuracy": 0.5}},
        "set_aside": [{"item_id": 6, "video_id": IMG, "keyframe": 2, "person_id": SCRIPT,
                       "inappropriate": 1, "bad_box": 0}],
        "other_actions": [{"item_id": 6, "video_id": IMG, "keyframe": 2, "person_id": 1,
                           "rater_id": SCRIPT, "text": PAYLOAD}],
    }  # fmt: skip


SUMMARIES = {
    "slider": slider_summary,
    "preference": preference_summary,
    "ranking": ranking_summary,
    "questionnaire": questionnaire_summary,
    "propose_verify": propose_summary,
}


@pytest.mark.parametrize("design", SUMMARIES)
def test_the_results_page_shows_stored_names_ids_and_reasons_as_text(design):
    # given: a finished run whose summary and exclusions carry markup wherever they name
    # something (questions, conditions, metrics, prompts, rater ids, reasons)
    tiny = tiny_of(design, name=PAYLOAD)
    done_run(tiny.study, summary=SUMMARIES[design](), exclusions=EXCLUSIONS)
    client, _ = staff_client()
    # when
    response = client.get(f"/studies/{tiny.study.slug}/results/")
    # then
    assert response.status_code == 200
    body = response.content.decode()
    assert IMG not in body and SCRIPT not in body
    assert body.count(escape(IMG)) >= 3 and escape(SCRIPT) in body
    assert escape(PAYLOAD) in body.split('id="exclusion-list"')[1]  # the exclusion's reason


# --- figures: labels drawn as they are ----------------------------------------------------


def figure(client, run, name: str):
    return client.get(f"/api/analysis-runs/{run.pk}/figures/{name}.png")


def test_figures_draw_names_with_dollar_signs_literally():
    # given: a dimension, a metric and its target named with TeX's math delimiters
    tiny = tiny_study()
    curve = {MATH: {"2": 0.4, "3": 0.6}}
    agreement = {"rows": [{"metric": MATH, "target": MATH, "srcc": 0.5, "srcc_ci95_low": 0.4,
                           "srcc_ci95_high": 0.6}]}  # fmt: skip
    run = done_run(tiny.study, summary={"srcc_curve": curve, "metric_agreement": agreement})
    client, _ = staff_client()
    # when
    responses = [figure(client, run, name) for name in ("srcc-curve", "metric-agreement")]
    # then: drawn (mathtext would refuse the label: a server error, no figure)
    for response in responses:
        assert response.status_code == 200
        assert response.content.startswith(b"\x89PNG")


def test_preference_figures_draw_conditions_and_questions_literally():
    # given
    tiny = tiny_of("preference")
    row = {"question": MATH, "condition": MATH, "score": 0.1, "ci95_low": -1, "ci95_high": 1}
    summary = {
        "scale": [row, {**row, "condition": "plain", "score": -0.1}],
        "pairs": [{"question": MATH, "condition_a": MATH, "condition_b": "b", "win_rate_a": 0.6}],
        "raters": [{"rater_id": MATH, "n_decisive": 3, "left_share": 0.5}],
    }
    run = done_run(tiny.study, summary=summary)
    client, _ = staff_client()
    # when
    responses = [figure(client, run, n) for n in ("scale", "win-rate", "position-bias")]
    # then
    assert [r.status_code for r in responses] == [200, 200, 200]


# --- text drawn by the browser ---------------------------------------------------------------


HTML_SINKS = re.compile(
    r"\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|\bsrcdoc\b"
    r"|createContextualFragment|DOMParser|\beval\(|new Function\(|setTimeout\(\s*[\"'`]"
)


def test_the_pages_scripts_have_no_html_sink():
    modules = sorted(FRONTEND_JS.rglob("*.js"))
    assert len(modules) >= 10
    for module in modules:
        found = HTML_SINKS.findall(module.read_text())
        assert not found, f"{module.name} builds markup from text: {found}"


# Where each script puts a text somebody else wrote: as textContent (a text node), never
# as markup. (module, a regular expression that must match the line that shows it)
TEXT_FIELDS = [
    (
        "rater_onboarding.js",
        r'field\(section, "instructions"\)\.textContent = state\.study\.instructions',
    ),
    (
        "rater_onboarding.js",
        r'field\(section, "consent-text"\)\.textContent = state\.study\.consent_text',
    ),
    ("rater_finished.js", r'\$\("#completion-link"\)\.href = url;'),  # url: safeRedirect's, http(s)
    (
        "rater_finished.js",
        r'return target\.protocol === "https:" \|\| target\.protocol === "http:"',
    ),
    ("rater_onboarding.js", r'field\(node, "caption"\)\.textContent = pair\.caption'),
    ("rater_onboarding.js", r'field\(node, "explanation"\)\.textContent = pair\.explanation'),
    ("rater_onboarding.js", r'field\(node, "prompt"\)\.textContent = exemplar\.prompt'),
    ("rater_controls.js", r'field\(this\.node, "label"\)\.textContent = dimension\.label'),
    ("rater_controls.js", r'field\(this\.node, "help"\)\.textContent = dimension\.help_text'),
    ("rater_controls.js", r'field\(this\.node, "low"\)\.textContent = dimension\.anchor_low'),
    ("widgets/slider.js", r'field\(mount, "prompt"\)\.textContent = item\.prompt'),
    ("widgets/slider.js", r'field\(mount, "action"\)\.textContent = item\.action'),
    ("monitor.js", r"td\.textContent = text \?\? "),
    ("monitor.js", r"rater excluded: \$\{row\.rater_excluded_reason\}"),
    ("results.js", r"status\.textContent = "),
    ("widgets/dom.js", r"if \(text !== undefined\) node\.textContent = text;"),
]


@pytest.mark.parametrize(("module", "pattern"), TEXT_FIELDS)
def test_scripts_set_others_text_as_text_content(module, pattern):
    assert re.search(pattern, (FRONTEND_JS / module).read_text()), (module, pattern)


@pytest.fixture
def rater_page(browser):
    """A Chromium page that fails the test on any JavaScript error; alert() is recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.add_init_script("window.alert = (x) => { window.__alerted = String(x); };")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    close_context(context)
    assert errors == [], f"JavaScript errors on the page: {errors}"


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_rater_page_shows_the_studys_texts_as_text(live_server, rater_page, tmp_path, settings):
    from tests.frontend.conftest import Clip, add_tutorial
    from tests.frontend.rater_browser import agree, enter, finish_tutorial
    from tests.frontend_staff.test_audits import with_clips

    # given: markup in the study's texts, the questions' labels, help and anchors, the
    # tutorial's captions and every video's prompt and action
    settings.MEDIA_ROOT = tmp_path / "media"
    page = rater_page
    tiny = tiny_study(name=PAYLOAD, instructions=PAYLOAD, consent_text=PAYLOAD)
    with_clips(tiny, tmp_path)
    stimulus = Stimulus.objects.filter(study=tiny.study).first()
    add_tutorial(tiny, Clip(stimulus.rendition.read(), stimulus.poster.read()))
    Stimulus.objects.filter(study=tiny.study).update(prompt=PAYLOAD, action=IMG)
    Dimension.objects.filter(study=tiny.study).update(
        label=IMG, help_text=PAYLOAD, anchor_low=IMG, anchor_high=SCRIPT
    )
    for pair in tiny.study.tutorial_pairs.all():
        pair.label, pair.caption, pair.explanation = f"{IMG} {pair.order}", PAYLOAD, PAYLOAD
        pair.save()
    injected = "document.querySelectorAll('img[src=\"x\"], main script').length"
    # when: the consent, the tutorial and the first video to rate
    enter(page, live_server, tiny)
    consent = page.locator("[data-field=instructions]").text_content()
    agree(page)
    page.locator(".tutorial-pair").first.wait_for()
    tutorial = page.locator(".tutorial-pair").first.text_content()
    finish_tutorial(page)
    page.locator("#sliders .dimension").first.wait_for()
    rating = page.locator("#step-rating").text_content()
    # then: the texts as written, no element made of them, nothing ran
    assert consent == PAYLOAD
    assert page.locator("h1[data-field=study-name]").text_content() == PAYLOAD
    assert PAYLOAD in tutorial and IMG in tutorial
    assert IMG in rating and PAYLOAD in rating and SCRIPT in rating
    assert page.evaluate(injected) == 0
    assert page.evaluate("window.__alerted") is None
