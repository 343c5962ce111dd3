"""Settings: documented defaults, overridden by a settings file, then by MEMLAKE_* variables."""

from pathlib import Path

from memlake.settings import Settings, load_settings


def test_defaults_are_documented():
    for name, field in Settings.model_fields.items():
        assert field.description, f"setting {name} has no description"
    assert load_settings("/tmp/x").context_budget_tokens == 800


def test_env_beats_file_beats_default(tmp_path: Path, monkeypatch):
    settings_file = tmp_path / "memlake.toml"
    settings_file.write_text('summary_debounce_seconds = 5\nmmr_lambda = 0.5\n')
    monkeypatch.setenv("MEMLAKE_SETTINGS_FILE", str(settings_file))
    monkeypatch.setenv("MEMLAKE_MMR_LAMBDA", "0.7")

    settings = load_settings(tmp_path / "home")

    assert settings.summary_debounce_seconds == 5
    assert settings.mmr_lambda == 0.7
    assert settings.home == (tmp_path / "home").resolve()
    assert settings.lake_dir == settings.home / "lake"


def test_every_path_comes_from_the_home(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    settings = load_settings(tmp_path)
    settings.ensure_dirs()
    for sub in ("landing", "quarantine", "inputs/overrides", "inputs/forget", "inputs/access", "lake", "lancedb"):
        assert (tmp_path / sub).is_dir()
    assert settings.dagster_home == tmp_path.resolve() / "dagster_home"


def test_a_home_given_by_path_reads_its_own_settings_file(tmp_path: Path, monkeypatch):
    """`--home X` (load_settings(X)) reads X/memlake.toml, not the one of MEMLAKE_HOME."""
    monkeypatch.delenv("MEMLAKE_SETTINGS_FILE", raising=False)
    default_home, other_home = tmp_path / "default", tmp_path / "other"
    for home, lam in ((default_home, 0.3), (other_home, 0.5)):
        home.mkdir()
        (home / "memlake.toml").write_text(f"mmr_lambda = {lam}\n")
    monkeypatch.setenv("MEMLAKE_HOME", str(default_home))

    assert load_settings(other_home).mmr_lambda == 0.5
    assert load_settings().mmr_lambda == 0.3  # no home given: MEMLAKE_HOME's file
    assert load_settings(tmp_path / "bare").mmr_lambda == Settings.model_fields["mmr_lambda"].default


def test_a_setting_that_does_not_exist_is_an_error_not_a_default_kept_quietly(tmp_path: Path, monkeypatch):
    import pydantic
    import pytest

    monkeypatch.delenv("MEMLAKE_SETTINGS_FILE", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "memlake.toml").write_text('embeding_model = "hash"\n')  # a typo
    typo = r"memlake.toml: unknown setting 'embeding_model' \(did you mean 'embedding_model'\?\)"
    with pytest.raises(ValueError, match=typo):
        load_settings(home)
    with pytest.raises(pydantic.ValidationError, match="embeding_model"):
        load_settings(tmp_path / "bare", embeding_model="hash")
    monkeypatch.setenv("MEMLAKE_DEBUG", "1")  # other MEMLAKE_ variables are not settings, and are let be
    assert load_settings(tmp_path / "bare").embedding_model == ""


def test_a_negative_search_weight_is_refused_naming_the_setting(tmp_path: Path, monkeypatch):
    import pydantic
    import pytest

    monkeypatch.setenv("MEMLAKE_SEARCH_RECENCY_WEIGHT", "-1")  # the variable the user set, named by its setting
    with pytest.raises(pydantic.ValidationError, match="search_recency_weight"):
        load_settings(tmp_path / "home")


def _flat_home_settings(tmp_path: Path, monkeypatch, toml: str, **environment: str) -> Settings:
    """The settings of a home whose memlake.toml is `toml` (flat names, as homes made before the groups have),
    with `environment` set."""
    monkeypatch.delenv("MEMLAKE_SETTINGS_FILE", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "memlake.toml").write_text(toml)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    return load_settings(home)


def test_a_home_written_before_the_groups_loads_its_flat_settings_into_them(tmp_path: Path, monkeypatch):
    """A memlake.toml of flat names (as every home has one) still loads: each setting lands in its typed group,
    which the code takes whole (`settings.chunking`, `settings.limits`), and an environment variable still wins."""
    settings = _flat_home_settings(
        tmp_path, monkeypatch,
        "chunk_window_size = 3\nchunk_sentences = false\nchunk_long_turn_tokens = 96\n"
        "max_message_chars = 5000\nmmr_lambda = 0.8\ncontradiction_policy = \"supersede\"\n",
        MEMLAKE_CHUNK_LONG_TURN_KEYS="4")

    assert (settings.chunking.chunk_window_size, settings.chunking.chunk_sentences) == (3, False)
    assert (settings.chunking.chunk_long_turn_tokens, settings.chunking.chunk_long_turn_keys) == (96, 4)
    assert settings.chunking.chunk_questions is Settings.model_fields["chunk_questions"].default
    assert settings.limits.max_message_chars == 5000 and settings.mmr_lambda == 0.8
    assert settings.fold.contradiction_policy == "supersede"
    assert settings.fold.duplicate_jaccard == Settings.model_fields["duplicate_jaccard"].default
    assert settings.chunk_window_size == 3  # the flat name still reads
    # a group holds its own settings only: it is the staleness key of what it builds
    assert set(type(settings.chunking).model_fields) < set(Settings.model_fields)
    assert "mmr_lambda" not in type(settings.chunking).model_fields


def test_a_flat_memlake_toml_loads_into_the_search_context_and_serving_groups(tmp_path: Path, monkeypatch):
    """The search, context and serving settings are typed groups too (`settings.search`, `.context`,
    `.serving`), read from the flat names an old memlake.toml and the MEMLAKE_* variables use; each group holds
    its own settings only, and what a search or a reader is built from is the group, whole."""
    from memlake.search.params import SearchParams

    settings = _flat_home_settings(
        tmp_path, monkeypatch,
        "rrf_k = 25\nsearch_session_weight = 0.25\nwindow_turns = 2\nsearch_graph_hop_seeds = 3\n"
        "context_budget_tokens = 1200\ncontext_gate = \"off\"\nsearch_snapshot_rows = 777\n",
        MEMLAKE_CONTEXT_CACHE_SECONDS="2.5", MEMLAKE_SEARCH_SNAPSHOT_BACKGROUND_ROWS="55")

    assert (settings.search.rrf_k, settings.search.search_session_weight) == (25, 0.25)
    assert (settings.search.window_turns, settings.search.search_graph_hop_seeds) == (2, 3)
    assert settings.search.mmr_lambda == Settings.model_fields["mmr_lambda"].default
    assert (settings.context.context_budget_tokens, settings.context.context_gate) == (1200, "off")
    assert settings.context.context_cache_seconds == 2.5
    assert (settings.serving.search_snapshot_rows, settings.serving.search_snapshot_background_rows) == (777, 55)
    groups = (settings.search, settings.context, settings.serving)
    for group in groups:
        assert set(type(group).model_fields) < set(Settings.model_fields)
    assert not set.intersection(*(set(type(group).model_fields) for group in groups))
    # a search's knobs come from the group whole, as from the settings
    assert SearchParams.from_settings(settings.search) == SearchParams.from_settings(settings)
    assert SearchParams.from_settings(settings.search).rrf_k == 25
