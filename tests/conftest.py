import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path_factory):
    """Every test writes media into its own temporary folder, never into var/."""
    settings.MEDIA_ROOT = tmp_path_factory.mktemp("media")


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, one for the whole run: Playwright's sync API allows one instance
    per thread, so every browser test (rater pages, staff pages, playback) shares it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
