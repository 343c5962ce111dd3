"""Writes the sample landing files in data/samples/demo/ (agent id `demo`), reproducibly.

The story: Priya Nair, a backend engineer, talks to an assistant from January to October
2024. She moves from Berlin to Lisbon in June and from Acme Robotics to Northwind Labs in
September; see data/samples/README.md for the facts later tests rely on. Every id and
timestamp is derived from fixed inputs, so rerunning this script rewrites identical bytes.

Usage: python scripts/make_samples.py [output_dir]   (default: data/samples/demo)
"""

from __future__ import annotations

import json
import sys
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

NAMESPACE = uuid.UUID("6f1c7a52-3d0e-4c8e-9b7a-2f4e1d0c9a11")
ZIP_TIME = (2024, 10, 31, 12, 0, 0)  # fixed member times keep the zip byte-identical

Turn = tuple[str, str]  # (role, text)


@dataclass
class Conv:
    """One sample conversation: its visible turns plus the export-specific extras."""

    slug: str
    title: str
    start: str  # ISO 8601 UTC
    turns: list[Turn]
    # ChatGPT: index of a visible turn -> abandoned sibling chain (an edit or a regeneration).
    abandoned: dict[int, list[Turn]] = field(default_factory=dict)
    hidden_context: bool = False  # ChatGPT: a hidden custom-instructions message
    empty_before: set[int] = field(default_factory=set)  # ChatGPT: empty assistant node before turn i
    python_tool_before: set[int] = field(default_factory=set)  # ChatGPT: code + output before turn i
    # Claude: index of an assistant turn -> its thinking text (never part of the message).
    thinking: dict[int, str] = field(default_factory=dict)
    # Claude: index of an assistant turn -> (tool query, tool result text) before its answer.
    tool_use: dict[int, tuple[str, str]] = field(default_factory=dict)
    offset: str = "Z"  # JSONL: how created_at is written ("Z" or "+01:00")


def uid(*parts: str) -> str:
    """A stable UUID for a sample object."""
    return str(uuid.uuid5(NAMESPACE, "/".join(parts)))


def times(conv: Conv, count: int) -> list[datetime]:
    """Deterministic message times: users type for a while, the assistant answers quickly."""
    t = datetime.fromisoformat(conv.start.replace("Z", "+00:00"))
    out = []
    for k in range(count):
        t += timedelta(seconds=35 + (k * 53) % 97, microseconds=(k * 137_531) % 1_000_000)
        out.append(t)
    return out


# --- the story -----------------------------------------------------------------------------

CHATGPT: list[Conv] = [
    Conv(
        "c01", "Setting up a FastAPI project", "2024-01-08T09:12:00Z",
        [
            ("user", "Hi! My name is Priya. I'm a backend software engineer at Acme Robotics, and I live "
                     "in Berlin. I prefer concise answers with code examples, so please keep it short."),
            ("assistant", "Nice to meet you, Priya! Short answers with code it is. What are you building?"),
            ("user", "A small FastAPI service that exposes robot telemetry. How should I structure the "
                     "project so the routers don't import each other?"),
            ("assistant", "Keep one router per resource and wire them in a single app factory:\n\n"
                          "```python\nfrom fastapi import FastAPI\nfrom .routers import robots, "
                          "telemetry\n\ndef create_app() -> FastAPI:\n    app = FastAPI()\n    "
                          "app.include_router(robots.router, prefix=\"/robots\")\n    "
                          "app.include_router(telemetry.router, prefix=\"/telemetry\")\n    "
                          "return app\n```\n\nShared dependencies go in `deps.py`, which routers import, "
                          "never each other."),
            ("user", "Perfect. And settings? I keep passing the database URL around by hand."),
            ("assistant", "Use pydantic-settings and inject it as a dependency:\n\n```python\nfrom "
                          "functools import lru_cache\nfrom pydantic_settings import BaseSettings\n\n"
                          "class Settings(BaseSettings):\n    database_url: str\n\n@lru_cache\ndef "
                          "get_settings() -> Settings:\n    return Settings()\n```"),
        ],
        hidden_context=True,
    ),
    Conv(
        "c02", "Quick weeknight dinner", "2024-02-05T18:40:00Z",
        [
            ("user", "Can you suggest a quick weeknight dinner? I'm vegetarian and allergic to peanuts, "
                     "so please nothing with peanuts."),
            ("assistant", "How about a 20-minute chickpea and spinach skillet: fry garlic and cumin, add a "
                          "tin of chickpeas and tomatoes, simmer 10 minutes, stir in spinach, finish with "
                          "lemon. Serve with flatbread or rice."),
            ("user", "Sounds good. Can I make it ahead for lunch tomorrow?"),
            ("assistant", "Yes, it keeps 3 days in the fridge. Add the spinach and lemon when you reheat "
                          "so they stay fresh."),
            ("user", "Great, and something crunchy on top that isn't nuts?"),
            ("assistant", "Toasted pumpkin seeds or crispy fried onions both work and are nut-free. Check "
                          "the seed packet for a 'may contain peanuts' warning."),
        ],
        # The first version of the question was edited; the original and its answer are abandoned.
        abandoned={0: [
            ("user", "Can you suggest a quick weeknight dinner? Something like a satay stir-fry."),
            ("assistant", "Try a chicken satay stir-fry: marinate chicken in soy and lime, stir-fry with "
                          "peppers, and finish with a peanut satay sauce."),
        ]},
    ),
    Conv(
        "c03", "Heron launch checklist", "2024-02-26T10:05:00Z",
        [
            ("user", "I need a launch checklist for Project Heron. Actually, the launch is on March 14, "
                     "not March 4 - I had the date wrong earlier. That gives us a bit more time."),
            ("assistant", "Two extra weeks helps. A compact checklist:\n\n1. Freeze features on March 7\n"
                          "2. Load test the ingest path\n3. Run a restore drill from backups\n"
                          "4. Write the on-call runbook\n5. Prepare the status page and announcement"),
            ("user", "Tomás wants the load test done by the end of next week. Can you give me a locust "
                     "example?"),
            ("assistant", "```python\nfrom locust import HttpUser, task, between\n\nclass Ingest(HttpUser):"
                          "\n    wait_time = between(0.1, 0.5)\n\n    @task\n    def post_reading(self):\n"
                          "        self.client.post(\"/telemetry\", json={\"robot\": \"r1\", \"v\": 1.0})\n"
                          "```\n\nRun it with `locust -u 500 -r 50` and watch p95 latency."),
        ],
    ),
    Conv(
        "c04", "Postgres vs MongoDB for Heron", "2024-03-06T13:20:00Z",
        [
            ("user", "We had the database discussion today. We decided to use Postgres instead of MongoDB "
                     "for Project Heron. Our data is very relational and we need transactions."),
            ("assistant", "That sounds like the right call. Postgres gives you foreign keys, transactions "
                          "and JSONB for the few semi-structured fields, so you lose little of what MongoDB "
                          "offered."),
            ("user", "Which schema migration tool would you use with SQLAlchemy?"),
            ("assistant", "Alembic. Autogenerate a first migration and review it by hand:\n\n```bash\n"
                          "alembic init migrations\nalembic revision --autogenerate -m \"initial schema\"\n"
                          "alembic upgrade head\n```"),
            ("user", "Thanks. Aiko also wants audit history for the design configs. Any pattern?"),
            ("assistant", "Add an append-only `config_versions` table with the full JSONB document, the "
                          "author and a timestamp; the current config is the latest row per config id."),
        ],
        # The first answer was regenerated; the abandoned version is not part of the conversation.
        abandoned={1: [
            ("assistant", "Are you sure? MongoDB's flexible schema makes it the better fit for a fast-moving "
                          "project, and you can always add validation later."),
        ]},
        empty_before={3},
    ),
    Conv(
        "c05", "Weekend in Lisbon", "2024-04-08T08:30:00Z",
        [
            ("user", "My partner Jonas and I are spending a long weekend in Lisbon next month. We're also "
                     "looking at apartments there, we might move."),
            ("assistant", "Lisbon is lovely in May. For apartment hunting, Arroios, Alvalade and Campo de "
                          "Ourique are popular and well connected by metro."),
            ("user", "Which of those is best for cycling? I love cycling and would like to ride to work."),
            ("assistant", "Alvalade: it is relatively flat and close to the cycle paths along the Avenida "
                          "da República and Campo Grande."),
            ("user", "Good to know. Any vegetarian places we should try?"),
            ("assistant", "Try a Portuguese vegetarian tasting menu in Príncipe Real, and the many small "
                          "places with pastel de nata for dessert."),
        ],
    ),
    Conv(
        "c06", "Alembic migration fails on enum", "2024-04-29T15:45:00Z",
        [
            ("user", "My Alembic migration fails with `DuplicateObject: type \"order_status\" already "
                     "exists`. What's going on?"),
            ("assistant", "Autogenerate creates the enum type again. Create it once with `create_type=False` "
                          "in the column and create the type explicitly in the migration."),
            ("user", "Can you check which of my migrations create it? Here is the list of revision files."),
            ("assistant", "Two migrations create it: `3f2a_orders` and `7c1d_status_history`. Remove the "
                          "creation from the second one and use:\n\n```python\nsa.Enum(\"new\", \"paid\", "
                          "\"shipped\", name=\"order_status\", create_type=False)\n```"),
        ],
        python_tool_before={3},
    ),
    Conv(
        "c07", "Settling in", "2024-06-10T17:10:00Z",
        [
            ("user", "I moved to Lisbon last week! Jonas and I found a flat in Alvalade. Now I need to "
                     "sort out residency paperwork."),
            ("assistant", "Congratulations on the move! If you're an EU citizen, you'll need the CRUE "
                          "registration certificate from the city council, plus a NIF tax number if you "
                          "don't have one yet."),
            ("user", "I already have a NIF. What documents does the CRUE appointment need?"),
            ("assistant", "Usually your passport or ID, proof of address (your rental contract) and proof of "
                          "employment or income. Bring copies of everything."),
            ("user", "Thanks. Also, any tips for the internet contract? I work remotely for Acme Robotics "
                     "a few days a week."),
            ("assistant", "Fibre is widely available; compare MEO, NOS and Vodafone and ask for a contract "
                          "without a 24-month lock-in."),
        ],
    ),
    Conv(
        "c08", "Half marathon training plan", "2024-07-22T06:50:00Z",
        [
            ("user", "I'm going to run the Lisbon half marathon in October. I can run 10 km now. Can you "
                     "give me a short training plan?"),
            ("assistant", "Twelve weeks, four runs a week:\n\n- Tue: intervals (6x800 m)\n- Thu: 8-10 km "
                          "easy\n- Sat: long run, +1.5 km each week up to 19 km\n- Sun: 30 min recovery or "
                          "cycling\n\nTaper in the last two weeks."),
            ("user", "Cycling counts as cross training? I cycle most days anyway."),
            ("assistant", "Yes, easy cycling is great cross training. Just keep the day after a long run "
                          "light."),
            ("user", "And what should I eat before long runs? I'm vegetarian and allergic to peanuts."),
            ("assistant", "Oats with banana and honey two hours before, or toast with jam. Avoid energy bars "
                          "unless the label rules out peanuts."),
        ],
    ),
    Conv(
        "c09", "System design interview prep", "2024-08-26T16:00:00Z",
        [
            ("user", "I have a final interview at Northwind Labs on Thursday. It's a system design round. "
                     "Can we practice a rate limiter?"),
            ("assistant", "Sure. Start with requirements: per-user limits, distributed across instances, low "
                          "latency. A token bucket in Redis is the classic answer."),
            ("user", "Show me the Redis part briefly."),
            ("assistant", "```python\nallowed = redis.eval(TOKEN_BUCKET_LUA, 1, f\"rl:{user_id}\", rate, "
                          "burst, now)\n```\n\nKeep the refill and take in one Lua script so it is atomic."),
        ],
    ),
    Conv(
        "c10", "Oolong or green tea", "2024-09-30T08:15:00Z",
        [
            ("user", "You know I don't drink coffee. Is oolong or green tea better for focus in the "
                     "afternoon?"),
            ("assistant", "Both have moderate caffeine plus L-theanine. Oolong is a little stronger and less "
                          "bitter if steeped longer, so it suits a long afternoon."),
            ("user", "Where can I buy good oolong in Lisbon?"),
            ("assistant", "Look for specialist tea shops in Chiado and Príncipe Real; several import "
                          "Taiwanese oolongs. Ask for a Dong Ding or a Tieguanyin."),
        ],
    ),
    Conv(
        "c11", "Recovery after the half marathon", "2024-10-21T11:30:00Z",
        [
            ("user", "I ran the Lisbon half marathon yesterday! 1:52, faster than I hoped. My legs are "
                     "sore today."),
            ("assistant", "Congratulations! Walk or cycle very easily today, drink plenty, and give it a "
                          "week before any hard running."),
            ("user", "Is a light bike ride tomorrow okay?"),
            ("assistant", "Yes, 30-40 minutes in an easy gear helps the legs recover."),
        ],
    ),
    Conv(
        "c12", "Connection pooling at Northwind", "2024-10-28T14:10:00Z",
        [
            ("user", "At Northwind Labs we run Postgres behind PgBouncer. Our Python workers get "
                     "`prepared statement does not exist` errors."),
            ("assistant", "PgBouncer in transaction mode does not keep server-side prepared statements. "
                          "Disable them in the driver, e.g. with asyncpg:\n\n```python\n"
                          "pool = await asyncpg.create_pool(dsn, statement_cache_size=0)\n```"),
            ("user", "That fixed it. Any downside?"),
            ("assistant", "Slightly more parsing on the server; for most workloads it is negligible. "
                          "PgBouncer 1.21+ can also track prepared statements itself."),
        ],
    ),
]

CLAUDE: list[Conv] = [
    Conv(
        "k01", "Oolong tea in Berlin", "2024-01-15T19:30:00Z",
        [
            ("user", "I don't drink coffee, I prefer tea, oolong especially. Can you recommend a good "
                     "oolong for every day?"),
            ("assistant", "A roasted Taiwanese oolong such as Dong Ding is forgiving and cheap enough for "
                          "every day. Brew at about 90 °C for 1-2 minutes and re-steep several times."),
            ("user", "Any shops in Berlin you know of?"),
            ("assistant", "I can't check current shops, but Berlin has several specialist tea shops in "
                          "Prenzlauer Berg and Kreuzberg. Look for ones that list the harvest year."),
        ],
        thinking={1: "Scratchpad: she wants an everyday oolong. Maybe she also likes matcha? Keep it "
                     "short and practical."},
    ),
    Conv(
        "k02", "Docker compose healthchecks", "2024-01-29T11:00:00Z",
        [
            ("user", "My API container starts before Postgres is ready. How do I fix that in docker "
                     "compose?"),
            ("assistant", "Add a healthcheck to Postgres and make the API depend on it:\n\n```yaml\n"
                          "db:\n  healthcheck:\n    test: [\"CMD\", \"pg_isready\", \"-U\", \"app\"]\n"
                          "    interval: 2s\napi:\n  depends_on:\n    db:\n      condition: "
                          "service_healthy\n```"),
            ("user", "Does that also work in production on Kubernetes?"),
            ("assistant", "No, compose's depends_on doesn't exist there. Use a readiness probe and make "
                          "the app retry its database connection on startup."),
        ],
    ),
    Conv(
        "k03", "Project Heron kickoff", "2024-02-12T09:40:00Z",
        [
            ("user", "We kicked off Project Heron at Acme today. Tomás Ruiz is the tech lead, Aiko Tanaka "
                     "is our designer, and I own the backend. The Heron launch is on March 4."),
            ("assistant", "Congratulations on the kickoff! With a March 4 launch you have about three "
                          "weeks. Want help with a backend plan?"),
            ("user", "Yes please, a short one. It's an ingest service for robot telemetry plus a small "
                     "dashboard API."),
            ("assistant", "1. Week 1: schema and ingest endpoint\n2. Week 2: dashboard queries and auth\n"
                          "3. Week 3: load test, alerts, runbook\n\nAgree on the API contract with Aiko in "
                          "week 1 so the dashboard isn't blocked."),
            ("user", "Good idea. Tomás prefers short design docs, so I'll write one page."),
            ("assistant", "A one-page doc works: goal, API sketch, data model, risks, and the launch "
                          "checklist."),
        ],
        thinking={
            1: "Scratchpad: three weeks is tight for a new service. Mention scope and offer a plan.",
            3: "Scratchpad: telemetry ingest plus dashboard API. A week-by-week list fits her style.",
        },
    ),
    Conv(
        "k04", "Heron launch retro", "2024-03-18T10:15:00Z",
        [
            ("user", "Project Heron launched on March 14 and it went smoothly. Tomás asked me to run the "
                     "retro. Can you give me a simple format?"),
            ("assistant", "Use start, stop, continue: ten minutes of silent writing, then group the notes, "
                          "then pick two actions with owners."),
            ("user", "One thing that went well: switching to Postgres early made the reporting queries "
                     "trivial."),
            ("assistant", "Put that under 'continue' with a concrete example query, so the team remembers "
                          "why the decision paid off."),
        ],
        thinking={1: "Scratchpad: a retro format. Start/stop/continue is the simplest."},
    ),
    Conv(
        "k05", "Birthday gift for my sister", "2024-04-15T20:05:00Z",
        [
            ("user", "My sister Leela turns 30 next month. She's into pottery and hiking. Gift ideas?"),
            ("assistant", "A weekend wheel-throwing workshop, a good set of glaze brushes, or a "
                          "lightweight hiking daypack. An experience usually lands well for a 30th."),
            ("user", "The workshop idea is great. She lives in Manchester, by the way."),
            ("assistant", "Several studios in Manchester's Northern Quarter run weekend taster courses; "
                          "a gift voucher lets her pick the date."),
        ],
    ),
    Conv(
        "k06", "Chickpea curry", "2024-05-27T18:20:00Z",
        [
            ("user", "Give me a chickpea curry recipe. Remember I'm vegetarian and allergic to peanuts."),
            ("assistant", "Onion, garlic and ginger fried in oil; add garam masala, turmeric and chilli; "
                          "then two tins of chickpeas, a tin of tomatoes and coconut milk. Simmer 20 "
                          "minutes and finish with coriander. No peanuts anywhere."),
            ("user", "Can I freeze it? We're moving soon and I want to empty the freezer, not fill it."),
            ("assistant", "It freezes well, but for an upcoming move cook a half batch and eat it within "
                          "three days instead."),
        ],
        thinking={1: "Scratchpad: vegetarian, peanut allergy. Coconut milk is fine, avoid peanut oil."},
    ),
    Conv(
        "k07", "Cycling in Lisbon", "2024-06-24T07:45:00Z",
        [
            ("user", "Now that I live in Lisbon, the hills are brutal on my bike. Should I get an e-bike?"),
            ("assistant", "For Lisbon's hills an e-bike makes daily riding much more realistic. Let me "
                          "look at local options."),
            ("user", "Yes, and what about bike shops that service e-bikes?"),
            ("assistant", "Look for shops that are authorised service partners for the motor brand "
                          "(Bosch or Shimano). Ask about a first free service after 500 km."),
        ],
        thinking={1: "Scratchpad: she cycles a lot and just moved. A search for local shops may help."},
        tool_use={1: ("e-bike shop Lisbon", "Search results: Lisbon Bike Hub (Alvalade), Pedal Norte "
                                            "(Arroios), Cais Cycles (Cais do Sodré).")},
    ),
    Conv(
        "k08", "Thinking about a job change", "2024-08-05T21:10:00Z",
        [
            ("user", "I've been at Acme Robotics for four years and the on-call load is wearing me out. "
                     "I'm interviewing at Northwind Labs. How do I compare offers fairly?"),
            ("assistant", "List what matters before you see numbers: salary, on-call, remote policy, "
                          "growth, and the team. Then score both jobs against the same list."),
            ("user", "Northwind is fully remote and has a follow-the-sun on-call, which is a big plus."),
            ("assistant", "That directly addresses your main pain point. Ask them how often people are "
                          "actually paged per week."),
            ("user", "Good question, I'll ask in the final round."),
            ("assistant", "Also ask to talk to an engineer on the team you'd join, not only the manager."),
        ],
        thinking={1: "Scratchpad: on-call burnout is the driver. Give a neutral comparison method."},
    ),
    Conv(
        "k09", "First week at the new job", "2024-09-09T18:00:00Z",
        [
            ("user", "Big news: I started a new job at Northwind Labs last week! I left Acme Robotics at "
                     "the end of August. I'm a senior backend engineer on the payments platform."),
            ("assistant", "Congratulations, Priya! How was the first week?"),
            ("user", "Good but overwhelming. There are about 40 services. How do I ramp up fast?"),
            ("assistant", "Pick one request path end to end, trace it through logs and code, and draw it. "
                          "Then take a small bug in that path in week two."),
            ("user", "They use Go and Kafka, and I mostly know Python. Any quick resources?"),
            ("assistant", "Tour of Go for the language in a day, then read one of your team's consumers "
                          "next to the Kafka docs for consumer groups and offsets."),
        ],
        thinking={1: "Scratchpad: new job, new stack. Encourage, then ask how it went."},
    ),
    Conv(
        "k10", "Race week food", "2024-10-07T12:25:00Z",
        [
            ("user", "The half marathon is on October 20. What should I eat in race week? Vegetarian, "
                     "and I'm allergic to peanuts, so careful with gels and bars."),
            ("assistant", "Normal meals until three days out, then more carbs: rice, pasta, potatoes, "
                          "bread. For race morning, toast with honey and a banana about three hours "
                          "before the start."),
            ("user", "Which gels are peanut-free?"),
            ("assistant", "Many plain fruit gels are, but recipes change: read the allergen label of the "
                          "exact batch and try the gel on a long run first."),
        ],
        thinking={1: "Scratchpad: carb loading basics; stress allergen labels."},
    ),
]

JSONL: list[Conv] = [
    Conv(
        "n01", "KeyError in parse_ledger_v2", "2024-01-22T14:02:00Z",
        [
            ("user", "parse_ledger_v2 crashes with KeyError: 'currency' on order ORD-58213. The other "
                     "orders are fine."),
            ("assistant", "That order's ledger line probably lacks the currency field. Use a default and "
                          "log it:\n\n```python\ncurrency = line.get(\"currency\") or account.currency\n```"),
            ("user", "Right, ORD-58213 came from the old import, which didn't write currency."),
            ("assistant", "Then backfill those rows once and keep the default as a guard, with a warning "
                          "that includes the order id."),
            ("user", "Should parse_ledger_v2 raise instead of defaulting?"),
            ("assistant", "Raise for new data, default only for rows from the legacy import: a flag on the "
                          "row source keeps both behaviours explicit."),
        ],
    ),
    Conv(
        "n02", "Weekend cycling route", "2024-02-19T08:10:00Z",
        [
            ("user", "I love cycling. My partner Jonas and I want to ride part of the Berlin Wall Trail "
                     "this Saturday. About 60 km, where should we start?"),
            ("assistant", "Start at the East Side Gallery and head south along the Mauerweg towards "
                          "Treptow and Rudow; the surface is good and it's easy to cut short."),
            ("user", "Is it OK in February?"),
            ("assistant", "Yes, but expect wet leaves and short daylight. Leave by 10:00 and bring lights."),
        ],
        offset="+01:00",
    ),
    Conv(
        "n03", "Regex for order numbers", "2024-03-25T09:30:00Z",
        [
            ("user", "I need a regex that finds order numbers like ORD-58213 in free text."),
            ("assistant", "```python\nimport re\nORDER = re.compile(r\"\\bORD-\\d{5}\\b\")\n"
                          "ORDER.findall(text)\n```"),
            ("user", "Some are lower case, like ord-58213."),
            ("assistant", "Add the IGNORECASE flag: `re.compile(r\"\\bORD-\\d{5}\\b\", re.IGNORECASE)`."),
        ],
    ),
    Conv(
        "n04", "Moving checklist", "2024-05-13T19:00:00Z",
        [
            ("user", "We're moving from Berlin to Lisbon at the start of June. I live in Berlin until then. "
                     "What do I need to do on the German side?"),
            ("assistant", "Deregister your address (Abmeldung) up to a week before you leave, cancel or move "
                          "contracts (internet, electricity, broadcasting fee), and tell your bank and "
                          "health insurance."),
            ("user", "Do I need to deregister in person?"),
            ("assistant", "In Berlin you can usually do the Abmeldung online or by post; keep the "
                          "confirmation, Portuguese offices sometimes ask for it."),
            ("user", "And my bike? I'm not leaving it behind."),
            ("assistant", "Movers take bikes if you remove the pedals and turn the handlebar; insure it "
                          "separately if it's valuable."),
        ],
    ),
    Conv(
        "n05", "asyncio TimeoutError in ledger sync", "2024-07-08T13:15:00Z",
        [
            ("user", "Our ledger sync job throws asyncio.TimeoutError after exactly 30 seconds when the "
                     "partner API is slow."),
            ("assistant", "That's most likely the client's default timeout. Set it explicitly and retry "
                          "with backoff:\n\n```python\ntimeout = aiohttp.ClientTimeout(total=120)\n```"),
            ("user", "Retries could double-post entries, though."),
            ("assistant", "Send an idempotency key per ledger entry, e.g. the order id plus line number, "
                          "and have the partner deduplicate on it."),
        ],
    ),
    Conv(
        "n06", "Northwind onboarding notes", "2024-09-16T16:40:00Z",
        [
            ("user", "Help me keep onboarding notes for Northwind Labs. First: our payments consumer "
                     "reads from the Kafka topic payments.v1 with consumer group ledger-writer."),
            ("assistant", "Noted. I'd organise the notes per service: purpose, inputs, outputs, owners, "
                          "dashboards, runbooks."),
            ("user", "Second: deploys go through Argo CD, and the on-call rotation starts for me in "
                     "November."),
            ("assistant", "Added. Before November, shadow one on-call week and read the last three "
                          "incident reviews."),
        ],
    ),
    Conv(
        "n07", "Porto weekend trip", "2024-10-14T10:30:00Z",
        [
            ("user", "Jonas and I want a weekend in Porto in November. Train or car from Lisbon?"),
            ("assistant", "Train: the Alfa Pendular takes about three hours from Lisbon Oriente to Porto "
                          "Campanhã, and you avoid parking in Porto's old town."),
            ("user", "What should we not miss?"),
            ("assistant", "Walk from Ribeira across the Dom Luís I bridge to Gaia, visit Livraria Lello "
                          "early in the morning, and take the tram to Foz for the sunset."),
        ],
        offset="+01:00",
    ),
    Conv(
        "n08", "Dinner when Leela visits", "2024-10-24T17:55:00Z",
        [
            ("user", "My sister Leela is visiting us in Lisbon next week. Help me plan a vegetarian dinner "
                     "for four, no peanuts."),
            ("assistant", "Starter: grilled padrón peppers. Main: mushroom and chestnut rice with "
                          "caldo verde on the side. Dessert: baked apples with cinnamon."),
            ("user", "Leela doesn't like mushrooms."),
            ("assistant", "Swap the main for a roasted pumpkin and feta orzo; it's just as easy and "
                          "cooks in one tray."),
        ],
    ),
]


# --- writers -------------------------------------------------------------------------------


def chatgpt_conversation(conv: Conv) -> dict[str, object]:
    """One conversation in ChatGPT's export shape: a node tree, current_node on the visible leaf."""
    mapping: dict[str, dict[str, object]] = {}
    clock = iter(times(conv, 64))
    counter = iter(range(1000))

    def add(parent: str | None, message: dict[str, object] | None) -> str:
        node_id = uid("chatgpt", conv.slug, "node", str(next(counter)))
        mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
        if parent is not None:
            children = mapping[parent]["children"]
            assert isinstance(children, list)
            children.append(node_id)
        if message is not None:
            message["id"] = node_id  # ChatGPT reuses the node id as the message id
        return node_id

    def message(role: str, parts: list[object], *, content_type: str = "text", hidden: bool = False,
                recipient: str = "all", name: str | None = None, extra: dict[str, object] | None = None,
                ) -> dict[str, object]:
        metadata: dict[str, object] = {}
        if hidden:
            metadata["is_visually_hidden_from_conversation"] = True
        content: dict[str, object] = {"content_type": content_type, "parts": parts}
        if extra:
            content = {"content_type": content_type, **extra}
        return {
            "id": "",
            "author": {"role": role, "name": name, "metadata": {}},
            "create_time": None if role == "system" else next(clock).timestamp(),
            "update_time": None,
            "content": content,
            "status": "finished_successfully",
            "end_turn": role == "assistant" or None,
            "weight": 1.0 if role != "system" else 0.0,
            "metadata": metadata,
            "recipient": recipient,
        }

    root = add(None, None)
    parent = add(root, message("system", [""], hidden=True))
    if conv.hidden_context:
        parent = add(parent, message(
            "user", [], content_type="user_editable_context", hidden=True,
            extra={"user_profile": "Backend engineer.", "user_instructions": "Be concise; show code."},
        ))
    for i, (role, text) in enumerate(conv.turns):
        if i in conv.empty_before:
            parent = add(parent, message("assistant", [""]))
        if i in conv.python_tool_before:
            parent = add(parent, message("assistant", [], content_type="code", recipient="python",
                                         extra={"language": "python",
                                                "text": "print(open('revisions.txt').read())"}))
            parent = add(parent, message("tool", [], content_type="execution_output", name="python",
                                         extra={"text": "3f2a_orders.py\n7c1d_status_history.py"}))
        # An abandoned chain (the pre-edit question, or the pre-regeneration answer) is an older
        # sibling of the visible message; the visible branch continues from the newer one.
        branch = parent
        for alt_role, alt_text in conv.abandoned.get(i, []):
            branch = add(branch, message(alt_role, [alt_text]))
        parent = add(parent, message(role, [text]))
    start = datetime.fromisoformat(conv.start.replace("Z", "+00:00")).timestamp()
    last = max(m["message"]["create_time"] or 0 for m in mapping.values() if m["message"])  # type: ignore[index]
    conversation_id = uid("chatgpt", conv.slug)
    return {
        "title": conv.title,
        "create_time": start,
        "update_time": last,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": parent,
        "plugin_ids": None,
        "conversation_id": conversation_id,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": conversation_id,
    }


def claude_conversation(conv: Conv) -> dict[str, object]:
    """One conversation in Claude's export shape; thinking and tool blocks sit in `content`."""
    stamps = times(conv, 2 * len(conv.turns))
    messages = []
    for i, (role, text) in enumerate(conv.turns):
        blocks: list[dict[str, object]] = []
        start = stamps[i].isoformat().replace("+00:00", "Z")
        if i in conv.thinking:
            blocks.append({"type": "thinking", "thinking": conv.thinking[i], "summaries": [],
                           "start_timestamp": start, "stop_timestamp": start})
        if i in conv.tool_use:
            query, result = conv.tool_use[i]
            tool_id = "toolu_" + uid("claude", conv.slug, "tool", str(i)).replace("-", "")[:24]
            blocks.append({"type": "tool_use", "id": tool_id, "name": "web_search",
                           "input": {"query": query}})
            blocks.append({"type": "tool_result", "tool_use_id": tool_id, "name": "web_search",
                           "content": [{"type": "text", "text": result}], "is_error": False})
        blocks.append({"type": "text", "text": text, "citations": [],
                       "start_timestamp": start, "stop_timestamp": start})
        # The export's flat `text` runs the thinking into the answer, which is why parsers read blocks.
        flat = f"{conv.thinking[i]}\n\n{text}" if i in conv.thinking else text
        messages.append({
            "uuid": uid("claude", conv.slug, "msg", str(i)),
            "text": flat,
            "content": blocks,
            "sender": "human" if role == "user" else "assistant",
            "created_at": start,
            "updated_at": start,
            "attachments": [],
            "files": [],
        })
    return {
        "uuid": uid("claude", conv.slug),
        "name": conv.title,
        "created_at": conv.start.replace("Z", ".000000Z"),
        "updated_at": messages[-1]["created_at"],
        "account": {"uuid": uid("account", "priya")},
        "chat_messages": messages,
    }


def jsonl_lines(conv: Conv) -> list[dict[str, object]]:
    """One conversation as generic JSONL rows; the title rides on the first row."""
    rows = []
    for i, ((role, text), t) in enumerate(zip(conv.turns, times(conv, len(conv.turns)), strict=True)):
        if conv.offset == "Z":
            stamp = t.strftime("%Y-%m-%dT%H:%M:%SZ")
        else:  # a local offset: parsers must convert it to UTC
            hours = int(conv.offset[1:3])
            stamp = (t + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%S") + conv.offset
        row: dict[str, object] = {
            "conversation_id": f"notes-{conv.slug}",
            "message_id": f"{conv.slug}-m{i + 1:02d}",
            "role": role,
            "speaker": "Priya" if role == "user" else "Assistant",
            "content": text,
            "created_at": stamp,
        }
        if i == 0:
            row["title"] = conv.title
        rows.append(row)
    return rows


def write_zip(path: Path, members: dict[str, bytes]) -> None:
    """A zip with fixed member times, so the bytes do not depend on when it was written."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)


def main(out: Path) -> None:
    """Write the three sample files into `out`."""
    out.mkdir(parents=True, exist_ok=True)

    chatgpt = [chatgpt_conversation(c) for c in CHATGPT]
    chatgpt.reverse()  # the real export lists the newest conversation first
    titles = "".join(f"<li>{c['title']}</li>" for c in chatgpt)
    write_zip(out / "chatgpt_export.zip", {
        "conversations.json": json.dumps(chatgpt, ensure_ascii=False).encode(),
        "user.json": json.dumps({"id": "user-" + uid("user", "priya")[:24], "email": "priya@example.com",
                                 "chatgpt_plus_user": True, "phone_number": None}).encode(),
        "message_feedback.json": b"[]",
        "chat.html": f"<html><body><h1>ChatGPT export</h1><ul>{titles}</ul></body></html>".encode(),
    })

    claude = [claude_conversation(c) for c in CLAUDE]
    (out / "claude_export.json").write_text(json.dumps(claude, ensure_ascii=False), encoding="utf-8")

    lines = [json.dumps(row, ensure_ascii=False) for c in JSONL for row in jsonl_lines(c)]
    (out / "notes_chat.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    default = Path(__file__).resolve().parent.parent / "data" / "samples" / "demo"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
