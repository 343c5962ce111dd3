"""Forget over HTTP, proven by the scanner of every file under the home (tests/forget_scan.py)."""

from starlette.testclient import TestClient

from memlake.api import Memory
from service.app import create_app
from tests import forget_canary
from tests.forget_canary import CANARY, gone_everywhere
from tests.forget_scan import files_of, occurrences

home = forget_canary.home  # the fixture: the same canary home as the CLI tests


def test_preview_then_forget_a_conversation_over_http_leaves_no_trace_and_a_receipt(home):
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


def test_forget_a_fact_over_http_takes_the_message_it_was_read_from_and_leaves_no_trace(home):
    other = files_of(home, "B")
    assert occurrences(home, "Initech") and occurrences(home, CANARY)  # the scanner sees both before
    with TestClient(create_app(Memory(home), warm=False)) as client:
        facts = client.get("/v1/memory/facts", params={"agent_id": "A"}).json()["rows"]
        [employer] = {row["fact_id"] for row in facts if "Initech" in row["content"]}

        gone = client.post("/v1/memory/forget", json={"agent_id": "A", "fact_id": employer})

        assert gone.status_code == 200 and {row["fact_id"] for row in gone.json()["rows"]} == {employer}
        receipt = client.get("/v1/memory/forget/receipts", params={"agent_id": "A"}).json()["rows"][-1]
        assert (receipt["scope"], receipt["target"]) == ("fact", employer)
        assert receipt["removed"]["transcripts/turns"] == 1  # the message it was read from, and no other
        assert "Initech" not in client.get("/v1/memory/facts", params={"agent_id": "A"}).text
        again = client.post("/v1/memory/forget", json={"agent_id": "A", "fact_id": employer})
        assert again.status_code in (400, 404) and employer in again.text
    gone_everywhere(home, ("Initech", CANARY), other)  # the canary was said in the same message
    assert "Got it." in (home / "landing" / "A" / "export.jsonl").read_text()  # the rest of the file is kept


def test_forget_by_query_over_http_forgets_exactly_the_previewed_ids_and_leaves_no_trace(home):
    other = files_of(home, "B")
    before = occurrences(home, "Initech")
    assert before
    with TestClient(create_app(Memory(home), warm=False)) as client:
        preview = client.post("/v1/memory/forget/preview", json={"agent_id": "A", "query": "Initech"}).json()
        ids = list(dict.fromkeys(row["fact_id"] for row in preview["rows"]))
        assert ids and all("Initech" in row["content"] for row in preview["rows"])
        assert occurrences(home, "Initech") == before  # a preview forgets nothing
        facts = {row["fact_id"] for row in client.get("/v1/memory/facts", params={"agent_id": "A"}).json()["rows"]}

        for fact_id in ids:
            gone = client.post("/v1/memory/forget", json={"agent_id": "A", "fact_id": fact_id})
            assert gone.status_code == 200, gone.text

        after = {row["fact_id"] for row in client.get("/v1/memory/facts", params={"agent_id": "A"}).json()["rows"]}
        assert after == facts - set(ids)  # exactly the previewed ids went
        receipts = client.get("/v1/memory/forget/receipts", params={"agent_id": "A"}).json()["rows"]
        assert [row["target"] for row in receipts] == ids
        empty = client.post("/v1/memory/forget/preview", json={"agent_id": "A", "query": "Initech"})
        assert empty.status_code == 200 and empty.json()["rows"] == []
        found = client.get("/v1/memory/search", params={"q": "hiking Sintra", "agent_id": "A"})
        assert found.status_code == 200 and "Sintra" in found.text  # what the query did not name stays
    gone_everywhere(home, "Initech", other)


def test_forget_a_whole_agent_over_http_needs_its_id_typed_again_and_leaves_no_trace(home):
    other = files_of(home, "B")
    assert occurrences(home, CANARY) and occurrences(home, "Sintra")
    with TestClient(create_app(Memory(home), warm=False)) as client:
        for unconfirmed in ({"everything": True}, {"everything": True, "confirm": "B"}):
            refused = client.post("/v1/memory/forget", json={"agent_id": "A", **unconfirmed})
            assert refused.status_code == 400 and '"confirm": "A"' in refused.json()["error"]["message"]
        assert occurrences(home, CANARY)  # a refused forget takes nothing

        gone = client.post("/v1/memory/forget", json={"agent_id": "A", "everything": True, "confirm": "A"})

        assert gone.status_code == 200 and "Initech" in str(gone.json()["rows"])
        receipt = client.get("/v1/memory/forget/receipts", params={"agent_id": "A"}).json()["rows"][-1]
        assert receipt["scope"] == "agent" and receipt["removed"]["landing"] == 1
        found = client.get("/v1/memory/search", params={"q": "Umbrella", "agent_id": "B"})
        assert found.status_code == 200 and "Umbrella" in found.text  # the other agent is still answered
    gone_everywhere(home, (CANARY, "Sintra", "Initech"), other)
    assert not (home / "landing" / "A").exists()
