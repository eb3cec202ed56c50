"""The API's JSON parser: DRF's (strict: NaN and Infinity refused), and a body nested too
deeply for Python's decoder (``[[[[...]]]]``, a few kilobytes) refused as any other body
that is not usable JSON, a 400, where it would raise RecursionError, a 500."""

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply") from None
