"""The rater's page: one template that shows the current step; rater.js does the rest.

The view only renders: the journey (steps, order, breaks, eligibility) is decided by the
rater API (docs/rater-api.md), which the page calls from the browser.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext

from annotation.designs import design_of
from annotation.models import Study

API_ENDPOINTS = {
    "state": "api:rater-state",
    "consent": "api:rater-consent",
    "tutorial": "api:rater-tutorial",
    "tutorial_done": "api:rater-tutorial-done",
    "next": "api:rater-next",
    "answers": "api:rater-answers",
    "problems": "api:rater-problems",
    "withdraw": "api:rater-withdraw",
}


def rater_strings() -> dict[str, str]:
    """Every sentence the page's modules show, translated here so that they hold no text.

    `{n}`-style placeholders are filled in by the script.
    """
    return {
        "connection_lost": gettext(
            "Connection lost: you can go on, your answers are safe and will be sent as soon "
            "as the connection is back."
        ),
        "sending": gettext("Saving your answer…"),
        "signed_out": gettext(
            "Your sign-in has expired. Your answers are kept in this browser: please open "
            "the study link again."
        ),
        "answer_refused": gettext("This answer was not accepted: {detail}"),
        "load_failed": gettext("This page could not be loaded: {detail}"),
        "viewport_too_small": gettext("Your browser window is too small for this study."),
        "viewport_hint": gettext(
            "Please enlarge the window (or use a larger screen) and press “I agree” again."
        ),
        "consent_failed": gettext("Your consent could not be recorded."),
        "consent_changed": gettext("The consent text has changed."),
        "expert_answer": gettext("Expert's answer: {value}"),
        "your_answer": gettext("Your answer: {value}"),
        "no_tutorial": gettext("This study has no tutorial videos."),
        # the videos' names, as each design shows them
        "video_generated": gettext("Generated video"),
        "video_left": gettext("Left video"),
        "video_right": gettext("Right video"),
        "video_reference": gettext("Reference video"),
        "pv_segment": gettext("The segment"),
        "play": gettext("Play"),
        "next": gettext("Next"),
        "replay": gettext("Replay"),
        "watch_first": gettext("Watch the whole video first: the sliders open when it ends."),
        "move_sliders": gettext("Move every slider to give your rating."),
        "play_both": gettext("Play both"),
        "replay_both": gettext("Play both again"),
        "watch_both_first": gettext(
            "Watch both videos to the end first: the choice opens when they have played."
        ),
        "choose_one": gettext("Choose the better video, or “Equally good/bad”."),
        "ranking_video": gettext("Video {letter}"),
        # every tile has the same buttons: their names say which video each is for
        "ranking_compare": gettext("Compare"),
        "ranking_compare_name": gettext("Compare video {letter}"),
        "ranking_place": gettext("Place"),
        "ranking_place_name": gettext("Place video {letter}"),
        "ranking_take_back": gettext("Take back"),
        "ranking_take_back_name": gettext("Take back video {letter}"),
        "ranking_tie": gettext("Same place as the last"),
        "ranking_tie_name": gettext("Place video {letter} in the same place as the last"),
        "ranking_in_place": gettext("in place {rank}"),
        "ranking_played": gettext("Played"),
        "ranking_not_played": gettext("Not played yet"),
        "ranking_up": gettext("Move video {letter} up"),
        "ranking_down": gettext("Move video {letter} down"),
        # a video chosen or placed by its key, said in a live region
        "ranking_said": gettext("{video}: {status}"),
        "ranking_watch_all": gettext("Play every video to its end first ({left} left)."),
        "ranking_place_all": gettext("Place every video, from best to worst."),
        "questionnaire_watch_first": gettext(
            "Watch the whole video first: the questions open when it ends."
        ),
        "questionnaire_left": gettext("Still to answer ({left}): {names}."),
        "questionnaire_more": gettext("{count} more"),
        "questionnaire_ready": gettext("Press Next (or Enter) to save your answers."),
        "questionnaire_answered": gettext("{answered} of {total} answered"),
        "questionnaire_invalid": gettext("Invalid question"),
        "questionnaire_none": gettext("None of these"),
        "questionnaire_several": gettext("Choose every tag that applies."),
        "questionnaire_one": gettext("Choose the one tag that applies."),
        "questionnaire_optional": gettext("(optional)"),
        "questionnaire_count": gettext("{count} / {limit} characters"),
        "questionnaire_score": gettext("{value} (on a scale from {min} to {max})"),
        "exemplar_answer": gettext("The experts' answer: {value}"),
        "tutorial_done_rate": gettext("Start rating"),
        "exemplar_why": gettext("Why: {note}"),
        "exemplar_left_better": gettext("the left video is better"),
        "exemplar_right_better": gettext("the right video is better"),
        "exemplar_try": gettext("Which would you choose? Then see the experts' answer."),
        "exemplar_yours_same": gettext("Your choice: {value}, as the experts chose."),
        "exemplar_yours_other": gettext("Your choice: {value}; the experts chose otherwise."),
        "exemplar_try_answer": gettext("How would you answer? Then check with the experts."),
        "exemplar_try_question": gettext("Your answer: {question}"),
        "exemplar_check": gettext("Check my answer"),
        "exemplar_agrees": gettext(
            "Your answer: {value}. The test would count it as agreeing with the experts'."
        ),
        "exemplar_disagrees": gettext(
            "Your answer: {value}. The test would count it as not agreeing with the experts'."
        ),
        "exemplar_try_order": gettext(
            "How would you order them? Place each, from best to worst, then check with the experts."
        ),
        "exemplar_check_order": gettext("Check my order"),
        "exemplar_rank_caption": gettext("{place} (video {letter}, your place {rank})"),
        "exemplar_order_right": gettext(
            "Your order: {order}. You put the experts' best above their worst, which the "
            "test counts as right."
        ),
        "exemplar_order_wrong": gettext(
            "Your order: {order}. The test counts an order right when the experts' best "
            "is above their worst; yours is not."
        ),
        "exemplar_try_labels": gettext(
            "Which actions does the person in the box perform? Pick them, then check with "
            "the experts."
        ),
        "exemplar_check_labels": gettext("Check my labels"),
        "exemplar_recall": gettext(
            "You gave {found} of the experts' {total} labels (a recall of {recall}%, what "
            "the test counts)."
        ),
        "exemplar_extra": gettext("The experts did not give: {labels}."),
        "exemplar_rule_score": gettext("It counts a score from {low} to {high}."),
        "exemplar_rule_levels": gettext("It counts: {levels}."),
        "exemplar_rule_tags": gettext(
            "It counts your tags when those you and the experts both chose are at least "
            "{share}% of all the tags either chose."
        ),
        "choice_left": gettext("Left"),
        "choice_equal": gettext("Equally good/bad"),
        "choice_right": gettext("Right"),
        "exemplar_place_best": gettext("Best"),
        "exemplar_place_between": gettext("In between"),
        "exemplar_place_worst": gettext("Worst"),
        "exemplar_order": gettext("the best first, the worst last, as shown"),
        "exemplar_order_between": gettext(
            "the best first, the worst last, the others in between, as shown"
        ),
        "pv_watch_first": gettext(
            "Watch the whole segment first: answering opens when it has played to its end."
        ),
        "pv_group_one": gettext("{group}: choose {limit}"),
        "pv_group_range": gettext("{group}: choose 1 to {limit}"),
        "pv_group_up_to": gettext("{group}: up to {limit}"),
        "pv_group_full": gettext("{group}: {limit} at most. Take one back (✕) to choose another."),
        "pv_max_labels": gettext(
            "At most {max} labels per segment. Take one back (✕) to choose another."
        ),
        "pv_no_match": gettext("No action matches: try another word."),
        "pv_matches": gettext("{count} actions match: pick one, or type more."),
        "pv_enter_picks": gettext("Enter picks “{name}”."),
        "pv_remove": gettext("Take back {name}"),
        "pv_count": gettext("({count} of at most {max})"),
        "pv_choose_required": gettext(
            "Still to choose: {groups} (or flag the segment when you cannot)."
        ),
        "pv_verify_left": gettext("Say yes or no to every label ({left} left)."),
        "pv_yes": gettext("Yes"),
        "pv_no": gettext("No"),
        # a verify answer, said in a live region: "walk: Yes"
        "pv_said": gettext("{name}: {verdict}"),
        "pv_ready": gettext("Press Next (or Enter) to save your answer."),
        "ready": gettext("Press Next (or Enter) to save your rating."),
        "video_failed": gettext(
            "The video could not be loaded. If it does not play after a reload, skip it: "
            "the study's team is told, and your answers so far are kept."
        ),
        "video_skipped": gettext("The video was skipped and the study's team told."),
        "progress": gettext("{position} of {length} done"),
        "time_left": gettext("· about {minutes} min left"),
        "time_left_under_a_minute": gettext("· less than a minute left"),
        # the item that comes, said to a screen reader: "item_" and the design's key
        "item_slider": gettext("Video {number} of {length}"),
        "item_preference": gettext("Comparison {number} of {length}"),
        "item_ranking": gettext("Prompt {number} of {length}"),
        "item_questionnaire": gettext("Video {number} of {length}"),
        "item_propose_verify": gettext("Segment {number} of {length}"),
        "qualification_title": gettext("Qualification test"),
        "rating_title": gettext("Rating"),
        "qualification_retry": gettext(
            "The qualification test was not passed this time. You may try once more: the "
            "videos come in a new order."
        ),
        "qualification_passed": gettext(
            "You passed the qualification test. The study's videos follow now."
        ),
        "session_finished": gettext("You finished this session. Thank you!"),
        "break_left": gettext("{minutes}:{seconds}"),
        "paused_title": gettext("Your session is paused"),
        "paused_text": gettext(
            "The study's team has paused your session. Please come back later and press "
            "“Try again” (or reload this page) to go on where you stopped."
        ),
        "study_paused_title": gettext("This study is paused"),
        "study_paused_text": gettext(
            "The study's team has paused the study for now. Your answers are kept. Please "
            "come back later and press “Try again” (or reload this page)."
        ),
        "qualification_not_ready_title": gettext("The qualification test is not ready yet"),
        "qualification_not_ready_text": gettext(
            "Its videos are still being prepared. Please come back in a few minutes and "
            "press “Try again” (or reload this page)."
        ),
        "window_end_title": gettext("Waiting for the connection"),
        "window_end_text": gettext(
            "You have answered every video this page could hold without a connection. Your "
            "answers are safe in this browser; the study goes on by itself as soon as the "
            "connection is back."
        ),
        "nothing_to_rate_title": gettext("There is no video to rate right now"),
        "nothing_to_rate_text": gettext(
            "The next videos are still being prepared. Please come back later and press "
            "“Try again” (or reload this page)."
        ),
        "done_title": gettext("Thank you: you have finished the study."),
        "done_text": gettext("All your answers are recorded."),
        "full_title": gettext("This study has no place left"),
        "full_text": gettext(
            "Every session of this study already has its raters, so there is nothing for "
            "you to do here. Please return the study on your marketplace."
        ),
        "not_eligible_title": gettext("Thank you: your participation ends here."),
        "not_eligible_text": gettext(
            "Your answers are recorded, but you cannot take further sessions in this study."
        ),
        "screened_out_title": gettext("Thank you for taking the qualification test."),
        "screened_out_text": gettext(
            "Unfortunately your answers did not match the experts' closely enough, so you "
            "cannot take part in the rating sessions."
        ),
        "withdrawn_title": gettext("You have withdrawn from this study"),
        "withdrawn_text": gettext(
            "Nothing you answered will be used in its results. If you came from a "
            "marketplace, please return the study there. You may close this page."
        ),
        "redirecting": gettext("You will be taken back to the marketplace in a few seconds…"),
    }


@login_required
def study_page(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    config = {
        "slug": study.slug,
        # The unsent-answers queue is kept per study and per user of a shared browser.
        "user": request.user.pk,
        "csrf_token": get_token(request),
        "api": {
            name: reverse(route, kwargs={"slug": study.slug})
            for name, route in API_ENDPOINTS.items()
        },
        # How long the final message stays before the marketplace redirect.
        "redirect_delay_ms": 3000,
        # What the page downloads ahead of the item on screen, at most (rater_window.js).
        "ahead": {
            "items": settings.MOSAIC_RATER_AHEAD_ITEMS,
            "bytes": settings.MOSAIC_RATER_AHEAD_BYTES,
        },
    }
    return render(
        request,
        "frontend/rater/study.html",
        {
            "study": study,
            "rater_config": config,
            "strings": rater_strings(),
            # the design's widget markup (its ES module is named by the rater API's state)
            "widget_template": f"frontend/rater/widgets/{design_of(study).key}.html",
            "widget_module": design_of(study).widget,
        },
    )
