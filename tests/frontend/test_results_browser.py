"""The researcher's results page in Chromium: running an analysis stays on the page."""

import pytest

from quality.models import AnalysisRun
from tests.factories import UserFactory
from tests.frontend.test_monitor_browser import signed_in
from tests.quality.test_analysis_runs import rated_study

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.django_db(transaction=True)
def test_a_new_analysis_runs_from_the_results_page(live_server, context, page):
    # given: a researcher on the results page of a rated study with no run yet
    study, _ = rated_study(raters=4, stimuli=6)
    researcher = UserFactory()
    researcher.groups.create(name="researchers")
    signed_in(context, live_server, researcher)
    url = f"{live_server.url}/studies/{study.slug}/results/"
    page.goto(url)
    page.get_by_text("No finished analysis run yet.").wait_for()
    # when
    page.get_by_role("button", name="Run a new analysis").click()
    # then: the page follows the run and shows it, never leaving for the API
    page.locator("#alpha").wait_for(timeout=20_000)
    run = AnalysisRun.objects.get(study=study)
    assert run.status == AnalysisRun.Status.DONE
    assert page.url == url
    assert f"Analysis run {run.pk} of" in page.locator("main").inner_text()
