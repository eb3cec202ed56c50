from django.apps import AppConfig
from django.core import checks
from django.core.exceptions import ImproperlyConfigured


class MediaPipelineConfig(AppConfig):
    name = "media_pipeline"

    def ready(self) -> None:
        checks.register(check_transcode_limits)


def check_transcode_limits(app_configs, **kwargs) -> list[checks.CheckMessage]:
    """What the transcode task's time limits make of the settings, said by manage.py check
    (and the migrate that starts a deployment) before a worker starts."""
    from media_pipeline.job_liveness import transcode_time_limits, visibility_too_short

    try:
        transcode_time_limits()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), id="media_pipeline.E001")]
    problem = visibility_too_short()
    return [checks.Warning(problem, id="media_pipeline.W001")] if problem else []
