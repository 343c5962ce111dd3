"""The offline distiller: rules over the user's first-person statements, no model, no network.

It fills the same `DistilledSession` as the core model, so the whole pipeline
runs with no key. Precision over recall: a rule fires only on a plain
statement by the user (role "user"; not a question, not inside quotes or
code, not hypothetical or negated) and only on a narrow pattern; whatever it
cannot read with confidence it leaves out. What it reads:

- name ("my name is ...", "I'd prefer to be called ...", "I'm going by ..."),
  job title and employer ("I'm a backend engineer at ...", "I work at/for ...",
  "I started a new job at ...", "I've been at ... for four years", "I'm on the
  platform team at ...", "I accepted an offer from ... and start Monday",
  "I'm officially a ..."), leaving a job ("I left ...");
- home city ("I live in ...", "I moved to ... last week", "we've settled in
  ...", "we call ... home", "we're moving from ... to ..."; "until then"
  closes the old city);
- preferences and dislikes ("I prefer/like/love/enjoy ...", "I don't drink
  ...", "I hate ..."), diet ("I'm vegetarian", "I've eaten vegan for years")
  and allergies;
- decisions ("we decided to ..."), plans and commitments ("I'm going to ...",
  "I plan to ..."), corrections ("actually ..., not ..."), deadlines ("the
  Heron launch is on March 4", "Project Heron slipped to June 3"), skills ("I
  know Python");
- people the user mentions and how they relate ("my partner Jonas", "my
  sister Leela", "Tomás Ruiz is the tech lead") and what the user says about
  them ("Leela doesn't like mushrooms"; "she" when only one person is named);
  a partner in "I live with my partner, Jonas." or "Sam and I are together
  now"; a new partner in "I'm with Sam now" once the user says a relationship
  ended;
- past events with a date ("I ran the Lisbon half marathon yesterday");
- any other plain statement of the user's about their own life that no rule above reads
  (`readers/self_statements.py`, issue 23): "I adopted a rescue cat called Miso last spring", "Every Sunday I
  call my grandma", "My favourite colour is teal", read by sentence structure (a first-person subject, a
  verb that is no reaction to the chat, nothing pointing at the chat) and typed by it (plan, past event,
  taste, skill, relative, fact); a named relative or pet is the subject of its own fact; a sentence none of
  whose clauses said enough alone is kept whole ("I'm doing kickboxing and it's giving me energy"), and a sentence
  that leaves its "I" out ("Been working on some projects") is read as if it said it;
- trips with their days ("I'm going to Lisbon from 3 to 10 June").

What it leaves out (memlake-offline-7): a promise in passing with no day and no name ("I'll go train", "I'm
gonna keep pushing"), a mood of the moment ("I'm staying positive"), a clause that hangs on another ("Since we
chatted last", "Which is why ..."), a statement whose "he"/"her" no name said earlier in the turn stands for;
"Tom and I are planning a trip" is the user and Tom. Titles, Latin abbreviations and initials end no sentence
("St. Mary's Hospital"), and bracketed stage directions ("[shares a photo]") are no words of the user's.
memlake-offline-9 also leaves out a feeling told ("I felt relieved"), what a whole sentence points at with "this",
"something like this" or "here's" (only the chat shows which), "no <thing>" ("I have no big events coming up") and
news of the moment as the subject ("This week has been swamped with exams for me"); "I set up" / "I quit" are past
(never "sets up"), and "a new project - a thriller set in Ohio" keeps what the dash names.
memlake-offline-10 (issue 23): a day and month said without a year take the tense of their own clause, and a
present progressive is a plan ("I signed the lease, moving on June 1st" said in May is this June; "I moved on June
1st" is the last one); a plan for a stretch of days holds until the day after its last day whichever reader read it
("I'm going to Lisbon from August 14 to 21" too), and a plan says its stretch as calendar days.
memlake-offline-11 (issue 23, a user trial): a move into a home the city names ("We've moved into the Manchester
flat now", "my new place in Leeds") gives the home city; "I started at Northwind last Monday as a senior data
engineer" gives the new title as well as the employer; "I work as an analyst at Brightline in Leeds" makes Leeds the
home city as a guess the fact says (confidence 0.6, tag "inferred", no lives_in relation), dropped when the
conversation says where the user lives or that they work remotely or commute; a statement before a request ("I
prefer window seats, can you remember that?") is read as a statement, and adverbs that only colour a liking ("I
actually prefer") leave it a preference.
memlake-offline-12 (issue 23, precision on speakers no rule was written on): every self-statement passes one check
(`worth_keeping`): a place or time only the chat names ("goes there now and then", "longing to go back", "hooked ever
since", "started on Monday") or nothing named beside vague nouns, evaluations and time words ("learned a new skill",
"was playing a game", "wants to create something extraordinary") is no fact. A sentence whose left-out subject is
"it" ("Took a bit of work", "Took me ages") or whose -ing words are its subject ("Winning the title felt so good") is
not read as the user doing it, and a list the user likes is kept whole ("loves painting, pottery, and hiking").
memlake-offline-13 (issue 23, a stranger's trial export): a named person's job and employer are facts about them
("Giulia lives in Manchester too, she's a nurse at the Royal Infirmary"; a name is a person by what is said of it,
and a comma splice with "she"/"he" goes on about them); a place of work named with "the" is an employer ("I'm a
nurse at the Royal Infirmary"); a move plan says its day wherever the day is said ("On June 1st I'm moving to
Leeds"); going to or staying in a named place for a stretch of days is a trip whatever the verb ("I'm off to Berlin
from 14 to 21 August"); a comment on the telling ("by the way", "to be honest", "btw") is no part of what is told;
a relative or pet the user has is tagged `kin_or_pet` (the profile lists it with the people, not as identity).
memlake-offline-14 (a second trial): "I've got a beagle called Biscuit" is kin or a pet as "I have" is.
memlake-offline-15 (issue 23, recall): a sentence that gave no fact is read again with what the same message says its
references are (`readers/referents.py`): a title in quotes is a name ("I loved "Becoming Nicole" by Amy Ellis
Nutt"), "your <thing>" is the other side's by name when the chat has one named other speaker (only for what the user
did or has with it: no thanks, praise or promise), "it" is the one title said before or, opening a sentence with a
verb of its own, the one thing the user's sentence before named ("I went to a support group. It made me feel
accepted"), and "this <thing>" is a thing when the words say what it is ("I made this quilt for my niece's wedding");
these facts are typed by the nearest prototypes of the packaged embedding model when clearly nearer than their
structure's type, and merged into a candidate they say again (cosine >= 0.85) (`meaning.py`). Also: -ing words owning
something of the user's are a subject ("Seeing my students succeed motivates me"; not a short verdict), "they"/"their"
after a plural noun of the clause and a relative "that I" no longer stop a clause, "learnt" is a past, "we" with an
adverb before its verb ("We finally adopted ...") and a good time with its time before its place are read.
memlake-offline-16 (a third trial): "she" in a comma splice is
the person the sentence began with ("My sister Giulia lives in Leeds, she's a nurse at ...", with a partner named
too); a named person's move ("Giulia moved from Leeds to York in August", "Tom has moved to Swansea") is their home
city from the day said, and a promotion ("got promoted to ward manager", "was made deputy head") their title; a word
that only leads in ("Also Giulia ...") is no part of a name; a time leading a new statement in after a comma starts
a clause ("I've gone off oat milk, these days I ..."); an age reached ("Biscuit turned four last week") is a fact about
the pet or person, without a slot.
memlake-offline-16 also (issue 23, changes told in everyday shapes): a message typed all in
lowercase is read as if typed with capitals ("just moved to porto"); a change told with the user as object is the
user's ("Northwind hired me", "I got transferred to Oslo"); "we" opens a household's diet ("we went vegan"); "me and
Sam are dating", "going out with", "got together with Sam last spring", "I'm doing keto", "I've been eating a vegan
diet for three months", "a new job as a <title>", "bought a house in <city>", "in <city> since January"; a past
with its "I" left out before "to" and a name or a thing ("Relocated to Porto in March"; not "Excited to see"); "we"
opens a household's home too; "I was recruited by <org>", "an employee of <org>", "bumped up to <title>", "switched
over to", "started keto", "my new boyfriend Sam", "marrying Sam", "seeing Sam these days" (not "tomorrow", not "going
out with Sam for drinks"), a deadline that "moves to" a day, "has a new date: <day>" (a colon before a date ends no
sentence), "is now targeting <day>"; a named relative's move is their home ("My cousin Priya just moved to Lyon"),
"we're relocating to <city>" a plan to move, "I have a younger sister named Leela" a sibling. The slot readers read a
past next to its subject ("I officially started at" as "I started at"; what no slot reader names is kept as said);
"a <city> resident", "in <city> for years", "the move to <city> went", "based out of", "<org> is my new employer",
"left my old job for <org>", "found a job at", "work in marketing at <org>", "was appointed <title>", "vegan since
last year", "went from vegetarian to vegan", "a vegan household", "his name is Sam", "dating someone named Sam", a
deadline that "slides to"; a start "this week" is when it began, and "for a two-week trial" is a stretch of time.
A change from the old value to the new is read as the change to the new ("moved from Oslo to Porto", "pushed Heron
from June 3 to June 17", "went from vegetarian to vegan": "switched to vegan"), and "Hooli poached me from Initech" as
joining Hooli; "it" stands for the one project the sentence named before it ("Heron was June 3 but now it's June
17"); a break-up the sentence tells of someone else ("I'm with Noor now, Alex and I divorced") does not end the new
partner. "Reside" is "live" in other words; "I now hold the title of <title>", "Noor proposed", "tied the knot with",
"my name changed to", a deadline "extended to" a day.
memlake-offline-17 (a fourth trial): "there" after a verb of working ("I started there last Monday as a senior
analyst") is the one workplace the message named before it ("Halvard's offer", "an interview at Globex Labs"); a job
taken, landed or got, told of a person ("He's taken a job at Morriston Hospital", "Imogen has just landed a new job
as head of geography at Kingswood School"), is their employer and title, and "<Name> is moving to" names a person.
memlake-offline-18 (a review of the session): the text before a sentence is read once, from the text the sentences
were split from (`Rule.said_before`): "She’s a nurse", typed with a curly apostrophe, was looked up in the raw message
and missed, so "she" stood for no one.
memlake-offline-19 (a fifth trial, blind_3 as a development set, RealMem): the user's name after a greeting and a
lead-in ending in a colon; "<Org> is behind me", "moved on from", "done with" end what they name; a home got with a
move day ahead is a plan until that day and the home from it; a named person's promotion, plan ("Tomasz is moving to
Swansea"), later start ("she starts in September") and age are theirs; a pet of any kind ("my tortoise Biscuit",
typed by the packaged model in `kinds`) is the user's animal. A fact that does not stand alone (`stands_alone`: a
thing pointed at but not named, a vague head, a verb missing what it acts on, passing talk) is no fact, and a "when"
its sentence hung it on stays with it. A couple said of the two together, an organisation in a sentence about work,
a diet taken up and a title with the "I" left out in other words than the patterns'. How people type in an
assistant chat: contractions without apostrophes, questions without marks, asks of the assistant ("Just give me the
link"), "Regarding ..." and "This <thing>" of the chat's own work are no facts about the user.
memlake-offline-20 (the same day): in a chat with an unnamed AI assistant (`assistant_chat`), "we" with no day
(the user and the assistant at work), a body's or the mind's state of the moment, "still ...ing" and "right now",
a long message mostly not in the first person, lines of labelled fields ("Venue: ..."), what follows "Here is ...:",
stage directions and a thing the assistant brought into the chat give no facts. A season or a part of a month
("this summer", "early July") is its stretch of days (northern hemisphere); "my dad ..." is the user's dad's, not
the user's; "he's been there since June" dates that person's workplace; the user's own age is kept with the day it
holds (`own_age`).

Relative dates in what a fact says are written as the days they meant ("yesterday" said on 2023-05-08 is "on
2023-05-07"); a statement cut off before its object ("The user loves their.") is no fact, whichever rule read it.

Relative dates resolve against the time of the message that says them.
Besides candidates it writes an extractive summary, topics, key dates,
entities and relations.

Layout: `vocabulary` and `sentences` at the bottom, `people_places` (what the conversation names) and `reading`
(one sentence being read) above them, one module per rule family in `readers/` (named for what it reads), and
`distiller` on top, with `summary` and `dedupe`.
"""

from memlake.distill.offline.distiller import OFFLINE_DISTILLER_VERSION, OfflineDistiller, distill_offline

__all__ = ["OFFLINE_DISTILLER_VERSION", "OfflineDistiller", "distill_offline"]
