"""The scale tests' throwaway servers, on loopback, each gone with its test."""

import pytest

from tests.scale.object_storage import throwaway_s3
from tests.scale.postgres import throwaway_postgres


@pytest.fixture
def postgres_url():
    with throwaway_postgres() as url:
        yield url


@pytest.fixture
def s3_endpoint():
    with throwaway_s3() as endpoint:
        yield endpoint
