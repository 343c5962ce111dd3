"""`memlake serve`, `memlake mcp` and `memlake token`: a token is shown once and stored hashed, a revoked one is
refused at the next request, and listening beyond loopback needs a token first."""

from __future__ import annotations

import json
import sys

import pytest
from starlette.testclient import TestClient

from memlake.api import Memory
from pipelines.cli import main
from service.app import create_app
from service.tokens import tokens_path


def typed(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    """`memlake ARGS` through the console entry point: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["memlake", *args])
    with pytest.raises(SystemExit) as ended:
        main()
    printed = capsys.readouterr()
    return int(ended.value.code or 0), printed.out, printed.err


@pytest.mark.parametrize("command", [["serve", "--host", "0.0.0.0"], ["mcp", "--agent", "ann", "--transport", "http",
                                                                        "--host", "10.1.2.3"]])
def test_listening_beyond_loopback_without_a_token_is_refused(settings, monkeypatch, capsys, command) -> None:
    code, _, err = typed(monkeypatch, capsys, *command, "--home", str(settings.home))
    assert code == 2 and err.startswith("error: --host") and "memlake token add" in err, err
    assert "Traceback" not in err


def test_a_token_is_shown_once_stored_hashed_and_revoked_at_the_next_request(settings, monkeypatch, capsys) -> None:
    home = str(settings.home)
    code, secret, _ = typed(monkeypatch, capsys, "token", "add", "--agent", "ann", "--agent", "ben", "--note", "bot",
                            "--home", home)
    secret = secret.strip()
    assert code == 0 and secret.startswith("mlk_")
    stored = tokens_path(settings.home).read_text()
    assert secret not in stored and json.loads(stored)["tokens"][0]["agents"] == ["ann", "ben"]
    code, listed, _ = typed(monkeypatch, capsys, "token", "list", "--home", home)
    token_id = listed.split()[0]
    assert code == 0 and "ann,ben" in listed and "bot" in listed and secret not in listed

    memory = Memory(settings=settings.model_copy(update={"embedding_model": "hash"}))
    with TestClient(create_app(memory, warm=False)) as client:
        auth = {"Authorization": f"Bearer {secret}"}
        assert [a["agent_id"] for a in client.get("/agents", headers=auth).json()["agents"]] == ["ann", "ben"]
        assert typed(monkeypatch, capsys, "token", "revoke", token_id, "--home", home)[0] == 0
        assert client.get("/agents", headers=auth).status_code == 401
    code, _, err = typed(monkeypatch, capsys, "token", "revoke", token_id, "--home", home)
    assert code == 2 and f"no token with id {token_id!r}" in err


def test_a_token_for_a_bad_agent_id_is_refused(settings, monkeypatch, capsys) -> None:
    code, out, err = typed(monkeypatch, capsys, "token", "add", "--agent", "../x", "--home", str(settings.home))
    assert code == 2 and "invalid agent id" in err and not out
    assert not tokens_path(settings.home).exists()


@pytest.fixture
def blas_threads():  # type: ignore[no-untyped-def]
    """numpy's BLAS at two threads for the test (what OpenBLAS starts with on 2 cores), as it was after."""
    from threadpoolctl import threadpool_info, threadpool_limits

    before = {lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}
    threadpool_limits(limits=2, user_api="blas")
    yield lambda: {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}
    threadpool_limits(limits=before)


def test_a_server_keeps_numpy_blas_on_one_thread(settings, blas_threads) -> None:
    # OpenBLAS's second thread spins after every vector product: on 2 cores it burnt half a search's CPU
    assert blas_threads() == {2}
    create_app(Memory(settings.home), warm=False)
    assert blas_threads() == {1}


def test_an_mcp_server_keeps_numpy_blas_on_one_thread(settings, blas_threads) -> None:
    from service.mcp_server import build_server

    build_server(Memory(settings.home), "alice")
    assert blas_threads() == {1}


@pytest.mark.parametrize(("cores", "workers"), [({0}, 1), ({0, 1}, 2), (set(range(8)), 2)])
def test_serve_runs_one_process_per_core_by_default_at_most_two(settings, monkeypatch, capsys, cores,
                                                                 workers) -> None:
    """On 2 cores one process used about one of them at 8 clients (its Python steps run one at a time)."""
    import uvicorn

    served: list[dict] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.append({"app": app, **options}))
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: cores)
    monkeypatch.setenv("MEMLAKE_HOME", str(settings.home))  # serve sets it for its workers: restored after
    code, _, err = typed(monkeypatch, capsys, "serve", "--home", str(settings.home))
    assert code == 0, err
    if workers == 1:
        assert len(served) == 1 and "workers" not in served[0]
    else:
        assert served[0]["workers"] == workers and served[0]["app"] == "service.app:app_of_environment"
    code, _, err = typed(monkeypatch, capsys, "serve", "--workers", "3", "--home", str(settings.home))
    assert code == 0 and served[-1]["workers"] == 3, err


@pytest.mark.parametrize(("url", "problem"), [
    ("http://127.0.0.1:99999/v1", "port"), ("ftp://models.example/v1", "http:// or https://"),
    ("http:///v1", "no host"), ("localhost:8080/v1", "http:// or https://"), ("http://[::1/v1", "not a URL"),
    ("http://127.0.0.1:abc/v1", "port"), ("http://127.0.0.1:0/v1", "port")])
def test_serve_refuses_an_upstream_address_it_could_never_reach_at_start(settings, monkeypatch, capsys, url,
                                                                         problem) -> None:
    """A port above 65535 in MEMLAKE_UPSTREAM_BASE_URL started the service, and every chat and model list
    answered 500: the mistake is named, with its value, before anything listens."""
    import uvicorn

    listened: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: listened.append(args))
    monkeypatch.setenv("MEMLAKE_UPSTREAM_BASE_URL", url)
    code, _, err = typed(monkeypatch, capsys, "serve", "--home", str(settings.home))
    assert (code, listened) == (2, []), err
    assert err.startswith("error: ") and "MEMLAKE_UPSTREAM_BASE_URL" in err and repr(url) in err and problem in err
    assert "Traceback" not in err


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/v1", "https://api.example.com/v1", "http://[::1]:11434/v1",
                                 ""])
def test_serve_starts_with_an_upstream_address_it_can_reach_or_none(settings, monkeypatch, capsys, url) -> None:
    import uvicorn

    listened: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: listened.append(args))
    monkeypatch.setenv("MEMLAKE_UPSTREAM_BASE_URL", url)
    code, _, err = typed(monkeypatch, capsys, "serve", "--workers", "1", "--home", str(settings.home))
    assert (code, len(listened)) == (0, 1), err
