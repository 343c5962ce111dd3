"""What `memlake serve` reads besides the home: the upstream model of the proxy and the request bounds."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import httpx2
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class ServiceSettings(BaseSettings):
    """Settings of the HTTP service, from MEMLAKE_* environment variables."""

    # the home's own settings (memlake.settings) share the prefix: leave their names to them
    model_config = SettingsConfigDict(env_prefix="MEMLAKE_", extra="ignore", frozen=True)

    upstream_base_url: str | None = Field(None, description="OpenAI-compatible endpoint the proxy forwards to.")
    upstream_api_key: str | None = Field(None, description="Key sent to the upstream (never the caller's token).")
    upstream_model_map: str = Field(
        "", description='Model names the proxy renames: JSON {"alias": "upstream model"} or '
        "`alias=model,alias2=model2`.")
    upstream_timeout_seconds: float = Field(120.0, gt=0, description="How long the proxy waits for the upstream.")
    max_body_bytes: int = Field(1_000_000, ge=1_024, description="Largest request body accepted (413 above).")

    @field_validator("upstream_base_url")
    @classmethod
    def _reachable_url(cls, value: str | None) -> str | None:
        """An address the proxy could connect to, checked when the settings are read: a wrong one started the
        service and made every chat answer 500. Empty is none."""
        if value is None or not value.strip():
            return None
        problem = url_problem(value.strip())
        if problem is not None:
            raise ValueError(f"MEMLAKE_UPSTREAM_BASE_URL {value!r} {problem} (an OpenAI-compatible endpoint, "
                             "e.g. http://localhost:11434/v1)")
        return value.strip()

    @field_validator("upstream_model_map")
    @classmethod
    def _readable_map(cls, value: str) -> str:
        model_map(value)
        return value

    @property
    def models(self) -> dict[str, str]:
        """alias -> upstream model name."""
        return model_map(self.upstream_model_map)


def url_problem(url: str) -> str | None:
    """What keeps `url` from being an http(s) address of a host and port, or None."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # an unclosed [ of an IPv6 host
        return f"is not a URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return "is not an http:// or https:// URL"
    if not parts.hostname:
        return "names no host"
    try:
        port = parts.port  # raises for one that is not a number from 0 to 65535
    except ValueError:
        port = 0
    if port == 0:
        return "has no valid port: a port is a number from 1 to 65535"
    try:
        httpx2.URL(url)  # the proxy's client: what it would refuse at every request (a space in the host, ...)
    except httpx2.InvalidURL as exc:
        return f"is not a URL ({exc})"
    return None


def model_map(text: str) -> dict[str, str]:
    """The model map from its setting: JSON, or alias=model pairs separated by commas."""
    text = text.strip()
    if text.startswith("{"):
        try:
            pairs = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"upstream_model_map is not valid JSON: {exc}") from None
        if not isinstance(pairs, dict) or not all(isinstance(v, str) for v in pairs.values()):
            raise ValueError("upstream_model_map as JSON is an object of model names")
        return pairs
    split = [item.split("=", 1) for item in text.split(",") if item.strip()]
    if any(len(pair) != 2 for pair in split):
        raise ValueError("upstream_model_map is JSON or alias=model pairs separated by commas")
    return {alias.strip(): model.strip() for alias, model in split}
