"""The routes of `memlake serve`, split into a router per group (`service.routes`), are the routes `create_app`
served when it held them all: the same methods on the same paths, in its OpenAPI schema and answering."""

from __future__ import annotations

from starlette.testclient import TestClient

from memlake.api import Memory
from service.app import create_app

# every (method, path) of the OpenAPI schema of create_app before the split (main at 0bd5bee), and the /v1 twins of
# /memory/ingest and /agents added since (the openai client's base_url ends in /v1)
ROUTES = {
    ("get", "/agents"), ("get", "/v1/agents"), ("get", "/healthz"), ("post", "/memory/ingest"),
    ("get", "/memory/ingest/{ingest_id}"),
    ("post", "/v1/chat/completions"), ("post", "/v1/memory/context"), ("get", "/v1/memory/episodes"),
    ("get", "/v1/memory/export"), ("get", "/v1/memory/facts"), ("post", "/v1/memory/forget"),
    ("post", "/v1/memory/forget/preview"), ("get", "/v1/memory/forget/receipts"),
    ("get", "/v1/memory/history/{fact_id}"), ("post", "/v1/memory/ingest"), ("get", "/v1/memory/ingest/{ingest_id}"),
    ("get", "/v1/memory/profile"), ("post", "/v1/memory/reject"), ("post", "/v1/memory/remember"),
    ("get", "/v1/memory/search"), ("get", "/v1/memory/tools"), ("post", "/v1/memory/tools"), ("get", "/v1/models"),
}


def test_the_routers_serve_the_routes_create_app_served(settings) -> None:
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    with TestClient(create_app(memory, warm=False)) as client:
        paths = client.get("/openapi.json").json()["paths"]
        assert {(method, path) for path, item in paths.items() for method in item} == ROUTES
        assert client.head("/healthz").status_code == 200  # out of the schema, still answered
        # every route answers on its path: a refusal that says why, never "no such route" (Not Found) or 405
        for method, path in ROUTES - {("post", "/v1/chat/completions")}:
            answer = client.request(method.upper(), path.format(ingest_id="x", fact_id="x"),
                                    params={"agent_id": "erin"})
            no_route = answer.status_code == 405 or (answer.status_code == 404 and "Not Found" in answer.text)
            assert not no_route, (method, path, answer.text)
