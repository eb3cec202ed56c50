"""Figures of runs with little data: an undefined SRCC-curve point, no kept rater."""

import numpy as np
import pandas as pd
import pytest

from quality import plots
from quality.plots import MOS_FIGURES
from quality.stats.srcc_curve import group_sizes
from tests.factories import StimulusFactory, UserFactory, make_study
from tests.quality.rated import finished_session
from tests.quality.test_analysis_runs import request_run, researcher

pytestmark = pytest.mark.django_db

PNG = b"\x89PNG\r\n\x1a\n"


def two_rater_study(score, *, disjoint: bool, stimuli: int = 12):
    """Two raters in one session: each rates every stimulus, or each rates its own half
    (then no two stimuli are rated by both, and no SRCC between them is defined)."""
    from annotation.services.studies import study_build_sessions

    study = make_study(session_size=stimuli, golden_per_session=0)
    videos = StimulusFactory.create_batch(stimuli, study=study)
    (session,) = study_build_sessions(study=study)
    for r in range(2):
        mine = videos[r * stimuli // 2 : (r + 1) * stimuli // 2] if disjoint else videos
        finished_session(rater=None, session=session, videos=mine, score=lambda v, d: score())
    return study


def test_an_undefined_srcc_curve_point_is_drawn_as_a_gap(django_capture_on_commit_callbacks):
    # given: two raters who never rated the same stimulus
    rng = np.random.default_rng(0)
    study = two_rater_study(lambda: float(rng.integers(0, 101)), disjoint=True)
    client = researcher()
    run = request_run(client, study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert run.summary["srcc_curve_detail"]["subject"]["1"]["mean"] is None
    # when
    response = client.get(f"/api/analysis-runs/{run.pk}/figures/srcc-curve.png")
    # then
    assert response.status_code == 200 and response.content.startswith(PNG)


def test_srcc_curve_with_some_points_undefined_draws_the_others():
    curve = {
        "subject": {
            "1": {"mean": None, "low": None, "high": None, "draws": 0},
            "2": {"mean": 0.5, "low": 0.4, "high": 0.6, "draws": 3},
        }
    }
    assert plots.draw("srcc-curve", mos=None, summary={"srcc_curve_detail": curve}).startswith(PNG)


@pytest.mark.parametrize(("largest", "scale"), [(27, "linear"), (1500, "log")])
def test_the_srcc_curve_of_many_raters_has_a_logarithmic_axis(monkeypatch, largest, scale):
    # given: GAIA's 27 raters per group at most, or a crowd's 1,500 (sizes on a grid)
    sizes = group_sizes(largest)
    curve = {"subject": {str(n): {"mean": 1 - 1 / (n + 1), "draws": 5} for n in sizes}}
    drawn = []
    monkeypatch.setattr(plots, "_png", lambda fig: drawn.append(fig) or PNG)
    # when
    plots.srcc_curve(curve)
    # then
    (figure,) = drawn
    assert figure.axes[0].get_xscale() == scale
    if scale == "log":  # ticks as plain numbers, not TeX (mathtext is off)
        assert figure.axes[0].xaxis.get_major_formatter()(100, 0) == "100"


def test_a_run_without_kept_raters_offers_no_figure_it_cannot_draw(
    client, django_capture_on_commit_callbacks
):
    # given: both raters are line clickers, so the run has no MOS and no SRCC curve
    study = two_rater_study(lambda: 50.0, disjoint=False)
    api = researcher()
    run = request_run(api, study, django_capture_on_commit_callbacks)
    run.refresh_from_db()
    assert (run.status, run.mos, len(run.exclusions)) == ("done", [], 2)
    # when / then: the API answers 404 (not 500) for every figure, and says why
    for name in [*MOS_FIGURES, "srcc-curve"]:
        response = api.get(f"/api/analysis-runs/{run.pk}/figures/{name}.png")
        assert response.status_code == 404, name
        assert "it offers none: no rater was kept" in response.json()["detail"]
    assert plots.available(run.summary) == []
    # and the results page shows none of them either
    client.force_login(UserFactory(is_staff=True))
    page = client.get(f"/studies/{study.slug}/results/").content.decode()
    assert "/figures/" not in page
    # and mos.csv is its header only
    mos = b"".join(api.get(f"/api/studies/{study.slug}/exports/mos.csv").streaming_content)
    assert mos.decode().splitlines()[0].startswith("stimulus_id,") and len(mos.splitlines()) == 1


@pytest.mark.parametrize("name", MOS_FIGURES)
def test_mos_figures_of_an_empty_table_say_there_is_no_data(name):
    empty = pd.DataFrame(
        columns=["video_id", "dimension", "mos", "std", "source_model", "action_class"]
    )
    assert plots.draw(name, mos=empty, summary={}).startswith(PNG)
