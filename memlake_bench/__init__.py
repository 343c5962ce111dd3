"""Benchmarks: LoCoMo retrieval recall (`locomo`), search at scale (`scale`), and the report (`render`)."""
