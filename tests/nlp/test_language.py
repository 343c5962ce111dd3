"""The language layer: one pipeline per process, parses cached by text, and what readers ask of a sentence.
Sentences written for these tests."""

from __future__ import annotations

import pytest

from memlake import nlp
from memlake.nlp import language_model as the_pipeline
from memlake.nlp import read


def test_the_pipeline_is_loaded_once_per_process() -> None:
    assert nlp.pipeline() is nlp.pipeline()


def test_a_text_parsed_again_comes_from_the_cache() -> None:
    text = "My cousin keeps bees on her roof in Hackney."
    assert nlp.parse(text) is nlp.parse(text)
    assert nlp.parse(text) is not nlp.parse(text + " ")


def test_the_cache_of_parses_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(the_pipeline, "CACHE_SIZE", 3)
    for n in range(6):
        nlp.parse(f"I walked {n} miles today.")
    assert the_pipeline.parses_cached() <= 3


def test_a_missing_model_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(the_pipeline, "_pipeline", None)
    monkeypatch.setattr(the_pipeline, "MODEL_PACKAGE", "no_such_language_model_pkg")
    with pytest.raises(nlp.LanguageModelMissing, match="make install"):
        nlp.pipeline()


def only_clause(text: str, predicate: str) -> nlp.Clause:
    (sentence,) = read(text)
    return next(c for c in sentence.clauses if c.predicate == predicate)


def test_a_clause_after_and_shares_the_subject_of_the_first() -> None:
    clause = only_clause("Last year I sold my car and started cycling to the office.", "start")
    assert (clause.subject, clause.person, clause.tense) == ("I", "I", "past")


def test_a_clause_inside_since_is_found_with_its_preposition() -> None:
    clause = only_clause("The rent has been cheaper since we moved up to Inverness.", "move")
    assert clause.person == "we" and ("to", "Inverness") in clause.preps


@pytest.mark.parametrize("text, predicate, negated", [
    ("I don't drink coffee after noon.", "drink", True),
    ("We never watch horror films.", "watch", True),
    ("I drink coffee after noon.", "drink", False),
])
def test_negation_is_read_on_the_clause(text: str, predicate: str, negated: bool) -> None:
    assert only_clause(text, predicate).negated is negated


@pytest.mark.parametrize("text, predicate, tense", [
    ("I taught maths for ten years.", "teach", "past"),
    ("I have sold the boat.", "sell", "past"),
    ("I used to smoke.", "smoke", "past"),
    ("I teach maths.", "teach", "present"),
    ("I will sell the boat in spring.", "sell", "future"),
    ("I'm going to sell the boat.", "sell", "future"),
])
def test_tense_is_read_from_the_verb_and_its_auxiliaries(text: str, predicate: str, tense: str) -> None:
    assert only_clause(text, predicate).tense == tense


def test_objects_and_a_subject_that_is_someone_else_are_kept_as_said() -> None:
    clause = only_clause("My brother Omar bought an old van.", "buy")
    assert clause.person == "other" and clause.subject == "My brother Omar"
    assert clause.objects == ("an old van",)


def test_named_entities_come_with_their_types() -> None:
    (sentence,) = read("Priya flew from Toronto to Lisbon in August.")
    labels = {e.text: e.label for e in sentence.entities}
    assert labels.get("Toronto") == "GPE" and labels.get("Lisbon") == "GPE"
    assert labels.get("August") == "DATE"
    assert sentence.text[sentence.entities[0].start:sentence.entities[0].end] == sentence.entities[0].text


def test_a_text_of_several_sentences_is_read_sentence_by_sentence() -> None:
    sentences = read("I moved to Oslo. My sister stayed in Bergen.")
    assert [s.text.strip() for s in sentences] == ["I moved to Oslo.", "My sister stayed in Bergen."]


@pytest.mark.parametrize("text, whole", [
    ("We saw Dr. Okafor at the clinic on Tuesday. It went well.", "We saw Dr. Okafor at the clinic on Tuesday."),
    ("My favourite author is J. R. R. Tolkien, always. Nobody comes close.",
     "My favourite author is J. R. R. Tolkien, always."),
    # "I" before a full stop is the pronoun ending a sentence, not an initial
    ("Nobody else went, did I. Then Sam called from Leeds.", "Then Sam called from Leeds."),
    ("Neither did I. We left Porto early.", "We left Porto early."),
])
def test_the_names_layer_splits_sentences_as_the_distiller_does(text: str, whole: str) -> None:
    """One sentence splitter (memlake.chunks.SENTENCE_END) for the names layer, the chunker and the distiller: a title
    or an initial ends no sentence, so the name stays in one piece wherever it is read."""
    from memlake.distill.models import Message
    from memlake.distill.offline.sentences import split_sentences
    from memlake.nlp.names import sentences_naming

    assert whole in list(sentences_naming(text))
    assert whole in [s.text for s in split_sentences(Message("m", "user", text, None))]  # type: ignore[arg-type]


@pytest.mark.parametrize("question, now", [
    ("where do I live now?", True),
    ("Which city am I living in these days?", True),
    ("what's my diet?", True),
    ("What do I eat?", True),
    ("so, am I still into horror films currently?", True),
    ("I'm cooking for friends tonight. What do I eat?", True),  # the question is the last sentence
    ("where did I live before?", False),
    ("Where have I lived?", False),
    ("what did I use to eat?", False),
    ("Where was I living in 2022?", False),
    ("Where will I live next year?", False),
])
def test_a_question_about_now_is_told_by_its_main_verb(question: str, now: bool) -> None:
    assert nlp.asks_about_now(question) is now


def test_topic_words_are_lemmas_without_names_or_stop_words() -> None:
    asked, violin, allergy, home = nlp.topic_words(["what instrument does Nadia play?", "Nadia plays the violin.",
                                                    "Nadia is allergic to peanuts.", "Where does Tomás live now?"])
    assert asked & violin == {"play"} and not asked & allergy  # "plays" is "play"; the name is no topic
    assert not {"nadia", "tomás", "the", "is", "does"} & (violin | allergy | home)
    assert "live" in home
