import pytest


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path_factory):
    """Every test writes media into its own temporary folder, never into var/."""
    settings.MEDIA_ROOT = tmp_path_factory.mktemp("media")
