"""One language layer for every reader: spaCy's small English pipeline, loaded once per process, parses cached by
text hash, and what readers ask of a sentence (clauses with subject, predicate, objects, negation and tense; named
entities with their types)."""

from memlake.nlp.clauses import Clause, Entity, ParsedSentence, asks_about_now, read, tense_of, topic_words
from memlake.nlp.language_model import LanguageModelMissing, parse, parse_all, pipeline

__all__ = ["Clause", "Entity", "LanguageModelMissing", "ParsedSentence", "asks_about_now", "parse", "parse_all",
           "pipeline", "read", "tense_of", "topic_words"]
