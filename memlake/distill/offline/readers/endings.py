"""What the user says is over for them, told as an idiom: "Kestrel is behind me", "I'm done with Globex", "I've moved
on from Initech", "Hooli is in the past". Read literally these are nonsense ("Kestrel is behind the user"); what they
say is that something ended, so the fact says it in the words the fold reads as an ending ("The user is done with
Kestrel."), and the fold ends the employer or state it names."""

from __future__ import annotations

import re

from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import guarded, third_person, trim_org
from memlake.distill.offline.vocabulary import FOR_A_WHILE, NOT_NAMES, ORG, PRONOUN_OBJECTS

# What ended: a name, or a few lowercase words ("my old job at the bank") after "moved on from" or "put".
_THING = (rf"(?P<what>{ORG}|(?:[a-z][\w'-]* ){{0,5}}(?!(?:in|at|of|the|a)\b)[a-z][\w'-]*"
          rf"(?: (?:in|at|of) {ORG})?)")
# Idioms with the user as subject: "I'm done with", "I'm finished with", "we've moved on from", "I've put X behind me".
_ADVERBS = r"(?:now |finally |officially |so |totally |completely |well and truly |pretty much |all )*"
_USER_IS_DONE = re.compile(rf"\b(?:I|[Ww]e)(?:'m| am|'re| are|'ve| have)? {_ADVERBS}(?:(?:done|finished|through) with|"
                           rf"moved on from) {_THING}")
_PUT_BEHIND = re.compile(rf"\b(?:I|[Ww]e)(?:'ve| have)? {_ADVERBS}put {_THING} behind (?:me|us)\b")
# Idioms with what ended as subject: "Kestrel is behind me", "Hooli is in the past", "Acme is history for me". Only a
# name here, no person's, and the idiom ends the clause: "the bus is behind me", "Sam is behind me in the queue" say
# where someone stands, "Sam is right behind me" or "... behind me all the way" that they back the user.
_IS_OVER = re.compile(rf"^(?:(?:so|and|but|now) )?(?P<what>{ORG}) (?:is|are|'s) (?:now |finally |well |all |firmly )*"
                      r"(?:behind (?:me|us)|(?:in the past|history)(?: for (?:me|us))?)(?: now| for good| at last)?"
                      r"\s*(?:$|[,.;:!])")


def read_ending(rule: Rule, clause: str) -> None:
    """An idiom of ending, said of a thing the user names: an event "The user is done with <it>."."""
    m = _USER_IS_DONE.search(clause) or _PUT_BEHIND.search(clause) or _IS_OVER.match(clause)
    if m is None or guarded(clause, m) or FOR_A_WHILE.search(clause[m.end():]):
        return  # (not "I'm not done with Acme", nor "done with work for today")
    what = m.group("what").strip(" .,!")
    if what[0].isupper():
        what = trim_org(what)
        if not what or what.split()[0] in NOT_NAMES or what in rule.context.people:
            return
    elif m.re is _USER_IS_DONE and not m.group(0).endswith(f"moved on from {m.group('what')}"):
        return  # "I'm done with the intro to my movie": a task finished, as often as a state ended; names only
    elif PRONOUN_OBJECTS.match(re.sub(r"^(?:my|our|the) ", "", what)):
        return  # "moved on from this", "put the rest of it behind me": only the chat says what
    else:
        what = third_person(what)
    rule.add("event", f"done with {what}", f"The user is done with {what}.", importance=0.6, tags=("ended",))
