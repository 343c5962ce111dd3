"""The change-set benchmark's story generator (the pipeline run itself is `memlake bench changes`)."""

from collections import Counter

from memlake_bench.changes import BLIND3_PHRASINGS, BLIND3_STORIES, BLIND_3, SEED, generate


def test_the_third_blind_set_tells_every_new_phrasing_twice_with_its_values_filled_in():
    stories = generate(BLIND3_STORIES, SEED + 3, halves=(BLIND_3,), prefix="b3", cycle=True)
    told = Counter((s.slot, s.new_text_template) for s in stories)
    expected = {(slot, template) for slot, (_, news, _) in BLIND3_PHRASINGS.items() for template in news}
    assert set(told) == expected
    assert set(told.values()) == {2}
    assert all("{" not in s.new_text and "{" not in s.old_text for s in stories)
    dated = [s for s in stories if s.slot == "project_deadline" and s.new_text_template.endswith("{new_iso}.")]
    assert dated and all(s.new in s.new_text for s in dated)
