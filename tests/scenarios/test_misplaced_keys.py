"""A key written in the wrong table says where it belongs instead of a near-miss
spelling: `[target] engine` is the top-level `engine` or `[targets.NAME] engine` (it
used to answer "did you mean 'table_engine'?")."""

from __future__ import annotations

import pytest

from loadtower.errors import ConfigError
from loadtower.scenarios.loader import load_scenario_text

RUN = '[[phases]]\ntype = "run"\nduration = "1s"\nrate = 5\n'


def test_engine_in_target_names_where_it_goes() -> None:
    with pytest.raises(ConfigError) as err:
        load_scenario_text(f'name = "t"\n[target]\nengine = "cassandra"\n{RUN}', "s.toml")
    message = str(err.value)
    assert "s.toml:3" in message and "target.engine" in message
    assert "top-level key" in message and "[targets.NAME]" in message
    assert "table_engine" not in message


def test_other_unknown_keys_still_get_a_spelling_hint() -> None:
    with pytest.raises(ConfigError) as err:
        load_scenario_text(f'name = "t"\n[target]\nkeyspac = "x"\n{RUN}', "s.toml")
    assert "did you mean 'keyspace'?" in str(err.value)
