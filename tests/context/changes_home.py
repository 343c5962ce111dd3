"""A small home of one user whose life changed, built through the real pipeline: the user moved (told indirectly:
keys to a flat elsewhere), changed diet, and came round to a taste they once disliked, among chats about other
things. The facts are those a distiller that caught each change would have read: after the pipeline ran, each day's
episodes are written again with these candidates and the facts, profiles and fact index folded from them, so what is
tested is the read path (search and the context block), whatever the offline distiller reads today.
"""

from __future__ import annotations

import dagster as dg

from assets import facts as fact_assets
from assets import search as search_assets
from memlake.api import Memory
from memlake.lake import Lake
from memlake.schemas import EPISODES
from tests.conftest import land
from tests.facts.test_facts_assets import at
from tests.transcripts.helpers import jsonl, msg

AGENT = "ann"


def fact(content: str, message_id: str, slot: str | None = None, value: str | None = None,
         kind: str = "fact") -> dict:
    return {"type": kind, "subject": "user", "slot": slot, "value": value, "content": content, "confidence": 0.9,
            "importance": 0.6, "tags": [], "valid_from": None, "valid_until": None, "message_ids": [message_id]}


# (conversation, day, what the user says then the assistant's reply, the facts read from the user's turn)
CHATS = [
    ("settling", "2024-01-10",
     ["I live in Leeds now, in a terraced house near Hyde Park with a tiny yard.",
      "Leeds is a lovely city, and Hyde Park is a great area."],
     [fact("The user lives in Leeds.", "settling-m0", "home_city", "Leeds")]),
    ("steak", "2024-01-15",
     ["I eat meat most days, a good steak on Fridays is my favourite thing to eat.",
      "A Friday steak sounds like a fine tradition."],
     [fact("The user eats meat most days.", "steak-m0", "diet", "meat eater")]),
    ("films", "2024-01-22",
     ["Honestly I can't stand horror films, they give me nightmares for a week.",
      "Then we'll keep the film nights to comedies."],
     [fact("The user dislikes horror films.", "films-m0", kind="preference")]),
    ("commute", "2024-02-03",
     ["Where I live the bus into Leeds city centre takes twenty minutes, which is handy.",
      "Twenty minutes is a short commute."],
     [fact("The user lives in Leeds.", "commute-m0", "home_city", "Leeds")]),
    ("tax", "2024-03-01",
     ["Filed the quarterly tax return with the accountant this morning.",
      "Good to have that done."], []),
    ("bike", "2024-03-12",
     ["The bicycle chain snapped on the way to the office, so I walked the last mile.",
      "A chain is a cheap fix at least."], []),
    ("keys", "2024-05-20",
     ["We finally got the keys to our flat in Bristol on Saturday, boxes everywhere!",
      "Congratulations on the new flat, Bristol is a great choice."],
     [fact("The user lives in Bristol.", "keys-m0", "home_city", "Bristol")]),
    ("documentary", "2024-06-01",
     ["Since that documentary I've gone vegetarian: lentils, tofu and a lot of halloumi.",
      "Lentils and halloumi make a lot of good dinners."],
     [fact("The user is vegetarian.", "documentary-m0", "diet", "vegetarian")]),
    ("marathon", "2024-06-20",
     ["Watched a whole horror marathon at the weekend and loved every minute, who knew.",
      "It sounds like you've come round to the genre."],
     [fact("The user no longer dislikes horror films and now loves them.", "marathon-m0", kind="preference")]),
]


def build(settings, fast_resources, run_pipeline) -> Memory:  # type: ignore[no-untyped-def]
    """The home of `CHATS`: landed and run through the pipeline, then the facts above folded in."""
    rows = [msg(name, index, ("user", "assistant")[index], said, day)
            for name, day, turns, _ in CHATS for index, said in enumerate(turns)]
    land(settings, AGENT, "chats.jsonl", jsonl(*rows))
    assert run_pipeline().success
    lake = Lake(settings.lake_dir)
    for day in sorted({day for _, day, _, _ in CHATS}):
        lake.write_partition(EPISODES, day, [{
            "agent_id": AGENT, "conversation_id": name, "title": name,
            "conversation_started_at": at(f"{day}T10:00:00"), "conversation_ended_at": at(f"{day}T10:01:00"),
            "summary": turns[0], "fact_candidates": candidates, "message_ids": [f"{name}-m0", f"{name}-m1"],
            "distiller": "memlake-offline-20", "ingested_at": at("2025-01-01T00:00:00"),
        } for name, said_on, turns, candidates in CHATS if said_on == day])
    built = dg.materialize([fact_assets.facts, fact_assets.profiles, search_assets.fact_index],
                           resources=fast_resources, instance=dg.DagsterInstance.ephemeral())
    assert built.success
    return Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
