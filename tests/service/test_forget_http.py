"""Forget over HTTP, proven by the scanner of every file under the home (tests/forget_scan.py)."""

from starlette.testclient import TestClient

from memlake.api import Memory
from service.app import create_app
from tests.forget_scan import files_of, occurrences
from tests.pipelines.test_forget import CANARY, gone_everywhere, home  # noqa: F401 - `home` is a fixture


def test_preview_then_forget_a_conversation_over_http_leaves_no_trace_and_a_receipt(home):  # noqa: F811
    other = files_of(home, "B")
    with TestClient(create_app(Memory(home), warm=False)) as client:
        preview = client.post("/v1/memory/forget/preview", json={"agent_id": "A", "query": "Initech"}).json()
        assert [row["content"] for row in preview["rows"]] == ["The user works at Initech."]
        assert occurrences(home, CANARY)  # a preview forgets nothing
        assert CANARY in client.get("/v1/memory/search", params={"q": CANARY, "agent_id": "A"}).text

        gone = client.post("/v1/memory/forget", json={"agent_id": "A", "conversation_id": "bank"})
        assert gone.status_code == 200 and "Initech" in str(gone.json()["rows"])
        receipts = client.get("/v1/memory/forget/receipts", params={"agent_id": "A"}).json()["rows"]
        assert receipts[0]["target"] == "bank" and receipts[0]["removed"]["transcripts/turns"] == 2
        # the warm server reads the compacted indexes (their older versions are gone): the rest is still found
        found = client.get("/v1/memory/search", params={"q": "hiking Sintra", "agent_id": "A"})
        assert found.status_code == 200 and "Sintra" in found.text and CANARY not in found.text

        again = client.post("/v1/memory/forget", json={"agent_id": "A", "conversation_id": "bank"})
        assert again.status_code in (400, 404) and "bank" in again.text  # nothing left to forget: said so
        empty = client.post("/v1/memory/forget/preview", json={"agent_id": "A", "query": ""})
        assert empty.status_code == 422
    gone_everywhere(home, CANARY, other)
