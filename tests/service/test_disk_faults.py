"""A full or read-only disk over HTTP: a write answers 507 (no space) or 503 (read-only) saying so with the path,
never the 500 kept for memlake's own bugs; reads keep working, and nothing half-written is left."""

from __future__ import annotations

import errno

import pytest
from starlette.testclient import TestClient

from memlake.api import Memory
from service.app import create_app
from tests.disk_faults import faulty_disk
from tests.service.echo_upstream import EchoUpstream
from tests.service.test_proxy import chat_request, proxy_alone

STATUS = {errno.ENOSPC: (507, "no space left on device"), errno.EDQUOT: (507, "no space left on device"),
          errno.EROFS: (503, "read-only file system")}


def refused_as(response, fault: int, path_part: str) -> None:  # type: ignore[no-untyped-def]
    status, said = STATUS[fault]
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == "storage_error" and error["message"].startswith(said), error
    assert path_part in error["message"], error


def nothing_half_written(folder) -> None:  # type: ignore[no-untyped-def]
    written = [p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".changed")]
    assert all(not p.name.startswith(".tmp-") and p.stat().st_size for p in written), written


@pytest.mark.parametrize("fault", [errno.ENOSPC, errno.EDQUOT, errno.EROFS])
def test_writes_on_a_full_or_read_only_disk_answer_507_or_503_with_the_path(settings, monkeypatch, fault) -> None:
    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    kept = memory.remember("erin", "I live in Porto.")["fact_id"][0]
    with TestClient(create_app(memory, warm=False), headers={"X-Memlake-Agent-Id": "erin"}) as client:
        with faulty_disk(monkeypatch, settings.home, fault):
            refused_as(client.post("/v1/memory/remember", json={"content": "I play the cello."}), fault,
                       str(settings.inputs_dir / "overrides"))
            refused_as(client.post("/v1/memory/forget", json={"fact_id": kept}), fault,
                       str(settings.inputs_dir / "forget"))
            refused_as(client.post("/memory/ingest", json={
                "conversation_id": "c1", "session_date": "2024-04-01",
                "turns": [{"user": "My sister lives in Lisbon.", "assistant": "Nice city."}]}), fault,
                str(settings.landing_dir / "erin"))
            stored = client.post("/v1/memory/tools", json={"name": "store",
                                                           "arguments": {"content": "I play the cello."}}).json()
            assert stored["ok"] is False and STATUS[fault][1] in stored["error"]["message"], stored
            facts = client.get("/v1/memory/facts")  # reads keep working
            assert facts.status_code == 200 and [r["fact_id"] for r in facts.json()["rows"]] == [kept]
        nothing_half_written(settings.home / "inputs")
        landed = settings.landing_dir / "erin"
        assert not landed.is_dir() or list(landed.iterdir()) == []
        made = client.post("/v1/memory/remember", json={"content": "I play the cello."})  # the fault is gone
        assert made.status_code == 200, made.text


@pytest.mark.parametrize("stream", [False, True])
def test_the_proxy_answers_whole_on_a_full_disk_and_stores_nothing_cut_short(settings, monkeypatch, stream) -> None:
    with (EchoUpstream() as upstream, proxy_alone(settings, upstream.base_url) as client,
          faulty_disk(monkeypatch, settings.landing_dir) as failed):
        answer = client.post("/v1/chat/completions", json=chat_request(stream=stream))
    assert failed, "the fault was never hit"
    assert answer.status_code == 200, answer.text
    assert "Where do I live?" in answer.text  # the echo of the question: the answer came back whole
    folder = settings.landing_dir / "erin"
    assert not folder.is_dir() or list(folder.iterdir()) == []
