"""A CreateMatches of many matches with one config parses it once."""

from __future__ import annotations

from referee.server.service import match_requests
from referee.server.state import validate
from sixnimmt.v1 import referee_pb2


def test_matches_with_one_config_share_the_parsed_config() -> None:
    request = referee_pb2.CreateMatchesRequest()
    for seed in range(3):
        request.matches.add(variant="classic", config_json='{"players": 2}', seed=seed, entrants=["a", "b"])
    request.matches.add(variant="classic", config_json='{"players": 3}', seed=9, entrants=["a", "b", "c"])
    specs = match_requests(request)
    assert specs[0].config is specs[1].config is specs[2].config
    assert specs[3].config == {"players": 3} and specs[3].config is not specs[0].config
    assert [engine.players for engine in validate(specs)] == [2, 2, 2, 3]
