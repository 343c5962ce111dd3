"""The reader table's rows for the user's diet and allergies and the projects' deadlines (issue 37, s13-readers;
they replace the regular expressions of readers/diet.py and readers/deadline.py). Each row is data over the parse
(`readers/table.py` builds and matches them); `write` is what a row cannot say: whose diet it is and whether it holds
now (not a meal, a week, a wish, a diet left); which project a deadline is of and which day the clause gives it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlake.distill.dates import find_dates
from memlake.distill.models import SLOT_TYPES
from memlake.distill.offline.readers.table_patterns import _LEFT_OUT, Reading, _child, _subject, _verb_of
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.vocabulary import CONDITION, DIETS, FOR_A_WHILE, SINCE_WHEN, TEMPORARY

if TYPE_CHECKING:
    from spacy.tokens import Token

# A diet's word as the parse splits it ("plant-based" is "plant", "-", "based": its last word).
_DIET_WORDS = sorted({d.rsplit("-", 1)[-1] for d in DIETS})
# The verbs a diet is kept or taken up with: "I'm vegan", "I eat halal", "I keep kosher", "I went vegan", "I've
# switched to keto", "I'm doing keto", "trying pescatarian these days", "the nutritionist put me on a paleo diet".
_KEPT = ["be", "eat", "follow", "keep", "do", "stay", "try", "live"]
_TAKEN_UP = ["go", "become", "turn", "switch", "change", "move", "convert", "transition", "return", "adopt", "start",
             "begin", "put"]
# What a diet word may say of a noun and still be the diet: "a vegan household", "a keto diet" (not "a vegan chef").
_DIET_NOUNS = frozenset({"diet", "household", "family", "food", "meal", "lifestyle", "eater"})
# Verbs a diet is only wished or tried for, or left, under: "I'm trying to go vegan", "I stopped eating vegan".
_WISHED = frozenset({"try", "want", "plan", "hope", "need", "like", "love", "consider", "think", "intend", "aim",
                     "stop", "quit", "drop", "give"})


def _diet(**attrs: object) -> dict[str, object]:
    return {"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LOWER": {"IN": _DIET_WORDS}, **attrs}}


def _allergic() -> dict[str, object]:
    return {"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LOWER": "allergic"}}


_OWN: tuple[Reading, ...] = (
    # the diet under the verb that keeps or takes it up, wherever the parse hangs it ("I eat strictly vegan", "I went
    # from vegetarian to vegan", "I've gone back to being vegetarian", "We're a vegan household now")
    Reading("diet", "diet", (
        [_diet(), {"LEFT_ID": "anchor", "REL_OP": "<<", "RIGHT_ID": "verb",
                   "RIGHT_ATTRS": {"LEMMA": {"IN": [*_KEPT, *_TAKEN_UP]}}}],
        # a diet the small model takes for the verb ("i do keto these days") or said alone ("Vegan here.", "Vegan
        # since last year.") or as what the user is ("As a vegetarian, I skip the meat")
        [_diet(), _child("anchor", "verb", DEP={"IN": ["aux", "auxpass"]}, LEMMA={"IN": _KEPT})],
        [_diet(DEP="ROOT"), _child("anchor", "when", LOWER={"IN": ["here", "since", "now"]})],
        [_diet(DEP="pobj"), {"LEFT_ID": "anchor", "REL_OP": "<", "RIGHT_ID": "as", "RIGHT_ATTRS": {"LOWER": "as"}}],
    )),
    # "I'm allergic to shellfish", "I am allergic to peanuts and cats", "I'm vegetarian and allergic to peanuts"
    Reading("allergic to", "allergy", (
        [_allergic(), _child("anchor", "to", DEP="prep", LOWER="to"), _child("to", "value", DEP="pobj")],
        # (a rare noun the small model takes for an infinitive: "allergic to shellfish")
        [_allergic(), _child("anchor", "value", DEP="xcomp"), _child("value", "to", DEP="aux", LOWER="to")],
    )),
)

def write(rule: Rule, reading: Reading, nodes: dict[str, Token]) -> None:
    """What a row of this module read, to its fact."""
    if reading.slot == "project_deadline":
        _write_deadline(rule, nodes)
        return
    if reading.slot == "allergy":
        verb = _verb_of(nodes["anchor"])
        if verb is None or _subject(verb) not in ("i", "we", _LEFT_OUT) or any(c.dep_ == "neg" for c in verb.children):
            return  # "My son is allergic to nuts", "I'm not allergic to anything"
        allergen = " ".join(t.text for t in nodes["value"].subtree if t.dep_ not in ("det", "punct", "aux"))
        rule.add("fact", allergen, f"The user is allergic to {allergen}.", importance=0.9,
                 tags=("health", "allergy", "food"))
        return
    diet = nodes["anchor"]
    name = diet.doc[diet.i - 2:diet.i + 1].text.lower() if diet.i >= 2 else diet.lower_
    name = name if name in DIETS else diet.lower_
    # the verb it hangs on (past another diet word: "I went from vegetarian to vegan"), or its "do" ("i do keto")
    verb = next((t for t in diet.ancestors if t.pos_ in ("VERB", "AUX") and t.lower_ not in _DIET_WORDS), None) or (
        next((c for c in diet.children if c.dep_ in ("aux", "auxpass") and c.lemma_ in _VERBS), None))
    alone = "as" in nodes or "when" in nodes  # "As a vegetarian, I ...", "Vegan here."
    if name in DIETS and (alone or (verb is not None and verb.lemma_ in _VERBS)) and _holds_now(diet, verb):
        rule.add(SLOT_TYPES["diet"], name, f"The user is {name}.", slot="diet", importance=0.7, tags=("food",))


def _holds_now(diet: Token, verb: Token | None) -> bool:
    """The user's own diet, kept now: not another's ("my friend is vegan"), not denied, not left ("from vegetarian
    to", "stopped eating vegan"), not wished, not before, not a dish ("vegan burgers", "keto recipes"), not for a
    meal or a while ("for a month": unless kept all along, "I've been vegan for years")."""
    if diet.head.lower_ == "from" or any(
            c.dep_ == "dobj" and c.ent_type_ != "DATE" and c.lemma_ not in ("life", "time") for c in diet.children) or (
            diet.dep_ in ("amod", "compound") and diet.head.lemma_ not in _DIET_NOUNS) or (
            diet.pos_ == "PROPN" and diet.dep_ in ("compound", "nsubj")):
        return False
    words = [t for t in (diet, verb, *diet.ancestors) if t is not None][:3]
    if any(c.dep_ == "neg" or c.lower_ == "before" for t in words for c in t.children):
        return False
    if verb is not None:
        said_of = next((c for c in verb.children if c.dep_ == "nsubj"), None)
        mine = (said_of is not None and said_of.lemma_ in _DIET_NOUNS and any(
            c.lower_ in ("my", "our") for c in said_of.children)) or any(  # "My diet is vegan now"
            c.dep_ == "dobj" and c.lower_ == "me" for c in verb.children)  # "The nutritionist put me on ..."
        # (the first subject up the clauses: "I've switched to eating vegetarian", "... to being vegetarian")
        own = next((c.lower_ for c in diet.children if c.dep_ == "nsubj"), None) or next(
            (s for t in (verb, *verb.ancestors) if (s := _subject(t))), None)
        if not mine and own not in ("i", "we", _LEFT_OUT):
            return False
        if (verb.dep_ == "xcomp" and verb.head.lemma_ in _WISHED) or (verb.lemma_ in _KEPT and verb.tag_ == "VBD"):
            return False  # "I'm trying to go vegan"; "I was vegan", "I tried keto once"
    rest = SINCE_WHEN.sub(" ", diet.doc[diet.i + 1:diet.sent.end].text)
    kept_along = verb is not None and verb.lemma_ in ("be", "eat") and any(
        c.lemma_ == "have" for t in (verb, diet) for c in t.children if c.dep_ == "aux")
    a_while = FOR_A_WHILE.search(rest) or TEMPORARY.match(rest)
    if a_while and not (kept_along and (verb.lemma_ == "be" or not a_while.group(0).rstrip("s").endswith(
            ("day", "week")))):
        return False
    first = [t.lower_ for t in diet.doc[diet.i + 1:diet.sent.end] if not t.is_punct][:2]
    return not (first[:1] in (["until"], ["till"]) or (first[:1] == ["for"] and first[1:2] and first[1] in _MEALS))


_VERBS = frozenset({*_KEPT, *_TAKEN_UP})
_MEALS = frozenset({"breakfast", "lunch", "dinner", "brunch", "supper", "snack", "dessert"})


# --- project deadlines (they replace readers/deadline.py): a project, a word of its date, and the day. Only a
# sentence saying "project" (or "the launch") is parsed for one: a deadline word alone ("go", "move") is everywhere.
# The words a deadline is said with: "the Heron launch is on March 4", "Project Falcon is due by June 1", "we pushed
# Project Heron to June 3", "Project Osprey's launch was delayed by two weeks to June 20", "we're targeting June 3 for
# Project Heron", "Project Falcon will now go live on May 30".
_DEADLINE_WORDS = ["launch", "ship", "release", "deadline", "date", "due", "target", "schedule", "slate", "plan",
                   "push", "move", "slip", "slide", "delay", "postpone", "reschedule", "shift", "defer", "extend",
                   "bump", "go", "track", "aim"]
_DONE_ON_A_DAY = frozenset({"be", "launch", "ship", "release", "go"})  # in the past: a day that was, no deadline
_OPENING = ["launching", "shipping", "releasing"]
_DAY_AFTER = frozenset({"to", "for", "on", "by", "until", "till"})  # the preposition a day comes after
DEADLINES: tuple[Reading, ...] = (
    Reading("deadline", "project_deadline", (
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {key: {"IN": words}}},
         {"LEFT_ID": "anchor", "REL_OP": side, "RIGHT_ID": "project", "RIGHT_ATTRS": {"LOWER": "project"}}]
        # (the small model may take an opening verb for a name: "Launching Project Osprey on May 30!")
        for side in (".*", ";*") for key, words in (("LEMMA", _DEADLINE_WORDS), ("LOWER", _OPENING)))
    ),
    # the launch or deadline of the one project the conversation is about: "Actually, the launch is on March 14"
    Reading("the deadline", "project_deadline", (
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": ["launch", "deadline", "release"]}, "POS": "NOUN"}},
         _child("anchor", "the", DEP={"IN": ["det", "poss"]}, LOWER={"IN": ["the", "our"]})],
    )),
    # "it" for the project the sentence named, said as changed: "Project Falcon is no longer June 3; it's June 17",
    # "Project Falcon was June 3 but now it's June 17"
    Reading("it is now", "project_deadline", (
        [{"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": "be"}}, _child("anchor", "it", DEP="nsubj", LOWER="it"),
         {"LEFT_ID": "anchor", "REL_OP": ";*", "RIGHT_ID": "project", "RIGHT_ATTRS": {"LOWER": "project"}}],
    )),
)


def _write_deadline(rule: Rule, nodes: dict[str, Token]) -> None:
    """The day a named project's deadline or launch is on: the day the clause of the deadline's word says, after
    its preposition or as what the date is (not "was due", not denied, not "if ...", not "moved to the Berlin team on
    June 2"); "it is now" only where the sentence names one project and says the day changed."""
    anchor = nodes["anchor"]
    sentence = anchor.sent
    verb = _verb_of(anchor) or sentence.root  # (or the sentence's head: "Launching Project Osprey on May 30!")
    if any(c.dep_ == "neg" for t in (anchor, verb) for c in t.children) and "it" not in nodes:
        return
    if CONDITION.search(sentence.text) or (verb.lemma_ in _DONE_ON_A_DAY and verb.tag_ == "VBD"):
        return  # "... if QA passes", "Project Heron was due on May 3", "Project Heron launched on March 14" (an event)
    if "it" in nodes and not (any(c.lower_ == "now" for c in anchor.children) or "no longer" in sentence.text):
        return
    # "Project Heron" as said (the word before a capitalised one), else a project the conversation named by its
    # name alone ("Heron now ships ...")
    words = {t.text for t in sentence}
    projects = {rule.context.project(t.nbor().text) for t in sentence[:-1]
                if t.lower_ == "project" and t.nbor().text[:1].isupper()} or {
        p for p in rule.context.projects if p.split(" ", 1)[1] in words}
    if not projects and anchor.lemma_ in ("launch", "deadline", "release") and any(
            c.lower_ in ("the", "our") for c in anchor.children):  # "the launch is on March 14": the one project
        projects = {rule.context.project(None)}  # the conversation is about
    projects.discard(None)
    if len(projects) != 1:
        return
    clause = verb if "it" not in nodes else anchor
    day = None
    for mention in find_dates(sentence.text, rule.sentence.message.created_at, context=""):
        span = sentence.doc.char_span(sentence.start_char + mention.start, sentence.start_char + mention.end,
                                      alignment_mode="expand")
        if span is None or mention.precision != "day" or span.root.i not in {t.i for t in clause.subtree} or (
                span.start > 0 and sentence.doc[span.start - 1].lower_ == "not"):
            continue  # (a day denied: "the launch is on October 23, not October 3")
        root = span.root  # (the day's own preposition may be in the mention: "on Friday")
        prep = root if root.lower_ in _DAY_AFTER else root.head
        if (prep.lower_ in _DAY_AFTER and prep.dep_ in ("prep", "agent")) or root.dep_ in (
                "attr", "npadvmod", "nsubj", "dobj", "appos"):
            # the last said ("from June 3 to June 17"), the nearest such day ahead: a deadline's tense is not its verb's
            day = find_dates(sentence.text[mention.start:], rule.sentence.message.created_at, context="")[0]
    if day is None or any(c.lower_ == "to" and not any(g.ent_type_ == "DATE" for g in c.subtree)
                          for c in verb.children if c.dep_ == "prep"):
        return  # "slipped to the bottom of the list"
    project = projects.pop()
    lemmas = {t.lemma_ for t in sentence}
    what = "deadline" if "it" in nodes or (lemmas & {"deadline", "due", "date", "target"} and not lemmas & {
        "launch", "release"}) else "launch"
    value = day.day.isoformat()
    rule.add(SLOT_TYPES["project_deadline"], value, f"The {project} {what} is on {value}.", subject=project,
             slot="project_deadline", importance=0.7, tags=("project", "deadline"))
    rule.entity(project, "project")
    rule.key_date(day, f"The {project} {what}.")


ROWS: tuple[Reading, ...] = (*_OWN, *DEADLINES)
SLOTS = frozenset(r.slot for r in ROWS)
