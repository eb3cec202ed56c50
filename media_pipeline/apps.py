from django.apps import AppConfig


class MediaPipelineConfig(AppConfig):
    name = "media_pipeline"
