"""Property-based run of every documented endpoint (schemathesis): no input, however odd,
makes the server fail with a 5xx."""

import json

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error

from tests.annotation.rater_fixtures import tiny_study
from tests.factories import UserFactory


def served_schema() -> dict:
    """The schema /api/schema/ serves, generated as its view does: the view serves it to
    researchers and admins only, and no one is signed in while the tests are collected."""
    document = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(document))


schema = schemathesis.openapi.from_dict(served_schema())
schema.app = get_wsgi_application()


@pytest.fixture
def admin_token(db):
    # The WSGI handler closes the connection after each request; inside a test
    # transaction that would end the test, so keep it open as Django's test client does.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    tiny_study()  # something for the endpoints to find
    user = UserFactory(is_staff=True, is_superuser=True)
    yield Token.objects.create(user=user).key
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.slow
@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_input_makes_the_server_fail(case, admin_token):
    case.call_and_validate(
        headers={"Authorization": f"Token {admin_token}"}, checks=[not_a_server_error]
    )
