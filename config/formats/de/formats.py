"""As every English page writes a moment (config/formats/en): one way in every language."""

from config.formats.en.formats import (  # noqa: F401
    DATE_FORMAT,
    DATETIME_FORMAT,
    SHORT_DATE_FORMAT,
    SHORT_DATETIME_FORMAT,
)
