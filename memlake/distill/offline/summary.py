"""The summary, topics and salience of a conversation, from its sentences and what the rules found."""

from __future__ import annotations

import re
from collections import Counter

from memlake.chunks import SENTENCE_END
from memlake.distill.models import Conversation, FactCandidate
from memlake.distill.offline.people_places import Context
from memlake.distill.offline.reading import Found
from memlake.distill.offline.sentences import QUOTED, Sentence, display_text, rule_text
from memlake.distill.offline.vocabulary import STOPWORDS


def _quote(text: str, limit: int = 160) -> str:
    text = text.strip()
    if len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0] + "…"
    return text


def summary_of(conversation: Conversation, sentences: list[Sentence], found: Found) -> str:
    parts: list[str] = []
    if conversation.title:
        title = conversation.title.strip()
        parts.append(title if title.endswith((".", "!", "?")) else title + ".")
    statements = list(dict.fromkeys(found.summary_sentences))
    asked = next((s.display for s in sentences if s.question and len(s.text.split()) >= 4), None)
    first_user = next((s.display for s in sentences if not s.question and len(s.text.split()) >= 4), None)
    said = statements[:1] or ([first_user] if first_user else [])
    for text in said:
        parts.append(f'The user said: "{_quote(text)}"')
    if asked:
        parts.append(f'The user asked: "{_quote(asked)}"')
    if len(parts) < 3 and len(statements) > 1:
        parts.append(f'The user said: "{_quote(statements[1])}"')
    if len(parts) < 3:
        answer = next((m for m in conversation.messages if m.role == "assistant" and display_text(m.content).strip()),
                      None)
        if answer:
            first = SENTENCE_END.split(display_text(answer.content).strip())[0].rstrip(":")
            if len(first.split()) >= 3:
                parts.append(f'The assistant answered: "{_quote(first)}"')
    if not parts:
        first = next((m for m in conversation.messages if m.content.strip()), None)
        parts.append(f'A conversation starting: "{_quote(display_text(first.content) if first else "")}"')
    return " ".join(parts[:3])


_WORD = re.compile(r"[A-Za-zÀ-ÿ][\w'+#.-]*[\w+#]|[A-Za-zÀ-ÿ]")
TOPIC_STOPWORDS = STOPWORDS | frozenset(
    """keep keeps kept set setting settings ask asked asks went end ends big news remember love loves loved
    find finds found today tonight tomorrow yesterday help want wants wanted work works working worked done
    doing make makes made take takes took come comes came look looks looking see sees seen run runs ran
    start starts started fine nice happy glad sounds sound okay works put puts call calls let lets instead
    usually often always never sometimes maybe probably actually really pretty quite enough small large
    part parts plus next last week weeks month months year years minutes hours morning evening afternoon
    anyone someone everyone something anything everything other others same different able example examples
    way ways tip tips thing stuff far near ahead later soon early late""".split()  # noqa: SIM905
)


def topics_of(conversation: Conversation, context: Context, limit: int = 5) -> list[str]:
    """Labels for what the conversation is about: its projects, then its most frequent words and word pairs."""
    counts: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = {}
    first_seen: dict[str, int] = {}
    weighted = [(conversation.title or "", 3)] + [
        (QUOTED.sub(" ", rule_text(m.content)), 2 if m.role == "user" else 1)
        for m in conversation.messages
        if m.role in ("user", "assistant")
    ]
    for text, weight in weighted:
        for sentence in re.split(r"[.,;:!?()\n]+", text):
            words = [w.strip(".-'") for w in _WORD.findall(sentence)]
            keys = [w.lower() for w in words]
            for i, key in enumerate(keys):
                if len(key) < 3 or key in TOPIC_STOPWORDS or key.isdigit():
                    continue
                grams = [(key, words[i])]
                if i + 1 < len(keys) and len(keys[i + 1]) >= 3 and keys[i + 1] not in TOPIC_STOPWORDS:
                    grams.append((f"{key} {keys[i + 1]}", f"{words[i]} {words[i + 1]}"))
                for gram, word in grams:
                    counts[gram] += weight
                    surface.setdefault(gram, Counter())[word] += 1
                    first_seen.setdefault(gram, len(first_seen))
    # A pair said at least twice (or in the title) stands for its words.
    pairs = [g for g in counts if " " in g and counts[g] >= 3 and sum(surface[g].values()) >= 2]
    for pair in pairs:
        for word in pair.split():
            counts[word] -= counts[pair]
    ranked = sorted((g for g in counts if (" " not in g or g in pairs) and counts[g] > 0),
                    key=lambda g: (-counts[g], first_seen[g]))
    topics = [p.lower() for p in context.projects]
    for gram in ranked:
        if len(topics) >= limit:
            break
        word = surface[gram].most_common(1)[0][0]
        label = word if any(ch.isupper() for ch in word[1:]) else gram
        taken = {w for t in topics for w in t.lower().split()}
        if label.lower() not in (t.lower() for t in topics) and not set(gram.split()) <= taken:
            topics.append(label)
    return topics[:limit]


def salience_of(candidates: list[FactCandidate], found: Found, conversation: Conversation) -> float:
    score = 0.15 + 0.12 * min(len(candidates), 5) + (0.1 if found.decisions else 0.0)
    score += 0.05 * min(len(found.key_dates), 2)
    if any(c.type in ("identity", "correction", "decision") or c.slot in ("home_city", "employer")
           for c in candidates):
        score += 0.1
    return round(min(score, 0.95), 2)
