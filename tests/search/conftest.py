"""The search folder's fixture: one home of two agents' chats, built once per module that reads it."""

import pytest

from tests.search.helpers import build_home


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One home, built once for the read-only tests of this module."""
    return build_home(tmp_path_factory)
