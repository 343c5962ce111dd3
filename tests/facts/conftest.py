"""Fixtures of `tests/facts`."""

from tests.facts.helpers import home_with  # noqa: F401 - a home of `ann` built from given chats
