"""The agent id rule: an id becomes a folder name under landing/ and quarantine/, so it must name a folder
strictly inside them, on any system, and look like no other id."""

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memlake.api import Memory
from memlake.schemas import agent_folder, check_agent_id, is_valid_agent_id

REFUSED = {
    "..": "a '.' or '-'",
    ".": "a '.' or '-'",
    "...": "a '.' or '-'",
    ".hidden": "a '.' or '-'",
    "-rf": "a '.' or '-'",
    "a..b": "'..'",
    "okid.": "end with '.'",
    "okid\n": "letters",
    "a/b": "letters",
    "": "letters",
    "x" * 65: "64",
    "CON": "device name",
    "con": "device name",
    "con.txt": "device name",
    "Nul": "device name",
    "COM1": "device name",
    "lpt9.log": "device name",
    "aux": "device name",
}
ACCEPTED = ["alice", "a.b", "_x", "a-b_c.d", "9lives", "CONx", "com10", "lpt0", "nul_", "x" * 64, "A.b.C"]


@pytest.mark.parametrize("agent_id", sorted(REFUSED))
def test_an_id_that_is_not_a_plain_folder_name_is_refused_naming_the_rule(agent_id):
    assert not is_valid_agent_id(agent_id)
    with pytest.raises(ValueError, match="invalid agent id") as refused:
        check_agent_id(agent_id)
    assert REFUSED[agent_id] in str(refused.value)


@pytest.mark.parametrize("agent_id", ACCEPTED)
def test_plain_ids_are_accepted(agent_id):
    assert is_valid_agent_id(agent_id)
    assert check_agent_id(agent_id) == agent_id


def test_memory_refuses_a_dot_dot_agent(settings):
    memory = Memory(settings.home)
    for read in (memory.turns, memory.facts, memory.profile):
        with pytest.raises(ValueError, match="invalid agent id '..'"):
            read("..")


ID_CHARS = string.ascii_letters + string.digits + "_.-/\\\n :"
agent_ids = st.one_of(
    st.text(alphabet=ID_CHARS, max_size=70),
    st.text(max_size=10),
    st.sampled_from(sorted(REFUSED) + ACCEPTED),
    st.builds(lambda name, ext: name + ext, st.sampled_from(["CON", "prn", "Aux", "nul", "COM3", "lpt1"]),
              st.sampled_from(["", ".txt", ".", "x"])),
)


@hsettings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(agent_id=agent_ids)
def test_every_id_is_refused_or_names_a_folder_strictly_inside_landing(agent_id):
    landing = Path("/nonexistent-memlake-home/landing")
    try:
        check_agent_id(agent_id)
    except ValueError as refused:
        assert "invalid agent id" in str(refused)
        return
    assert agent_folder(landing, agent_id) == landing / agent_id  # the one helper agrees
    folder = (landing / agent_id).resolve()
    assert folder.parent == landing and folder.name == agent_id  # one level down, under the id itself
    assert folder.name.split(".")[0].upper() not in {"CON", "PRN", "AUX", "NUL"} | {
        f"{port}{n}" for port in ("COM", "LPT") for n in range(1, 10)}
    assert agent_id.strip() == agent_id and not agent_id.startswith(("-", "."))


def test_an_agent_folder_that_is_a_link_out_of_its_parent_is_refused(tmp_path):
    landing = tmp_path / "home" / "landing"
    landing.mkdir(parents=True)
    (landing / "alice").symlink_to(tmp_path)  # landing/alice -> outside the home
    with pytest.raises(ValueError, match="'alice' is not a path inside"):
        agent_folder(landing, "alice")
    assert agent_folder(landing, "bob") == landing / "bob"


@pytest.mark.parametrize(("agent_id", "named"), [("../x", "'/'"), ("a b", "' '"), ("x" * 65, "not 65 characters")])
def test_a_refused_id_names_what_is_wrong_with_it(agent_id, named):
    from memlake.schemas import check_agent_id

    with pytest.raises(ValueError, match="invalid agent id") as refused:
        check_agent_id(agent_id)
    assert named in str(refused.value)
