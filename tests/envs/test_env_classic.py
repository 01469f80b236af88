"""The classic environment: API tests for every kind of config, exact masks, seeding, views."""

from __future__ import annotations

import random

import numpy as np
import pytest
from envkit import check_game, random_episode, seat_returns, through_the_wire
from gymnasium.utils.env_checker import check_env

from envs.classic import classic_encoding, env
from envs.single import SeatEnv
from games.classic.rules.classic import Classic, ClassicConfig
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE
from referee.rules.errors import ConfigError

# PettingZoo's api_test notes that a dict observation is not a Box: the mask is in the dict, as in its games.
pytestmark = pytest.mark.filterwarnings("ignore:Observation:UserWarning")

CONFIGS = [
    {},
    {"players": 2, "hands": 2, "target": None},
    {"players": 10, "tactics": True, "hands": 1, "target": None},
    {"professional": True, "players": 5, "target": 30},
    {"players": 3, "rows": 2, "row_capacity": 3, "hand_size": 4, "deck": 30, "hands": 3, "target": None},
]


@pytest.mark.parametrize(
    "options", CONFIGS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default"
)
def test_the_libraries_api_tests_pass_and_episodes_verify(options: dict[str, object]) -> None:
    check_game(env(**options), SeatEnv(env(**options), "random"), games=2, cycles=200)


def test_actions_are_cards_then_rows() -> None:
    enc = classic_encoding({"players": 4})
    assert enc.action_size == 104 + 4
    game = env()
    game.reset(seed=3)
    view = game.view("player_0")
    mask = game.observe("player_0")["action_mask"]
    assert list(np.flatnonzero(mask)) == [c - 1 for c in view.hand]


def test_the_same_seed_deals_what_a_referee_match_of_that_seed_deals() -> None:
    game = env()
    game.reset(seed=42)
    variant = Classic()
    start = variant.initial_state()
    dealt = variant.apply(start, {CHANCE: variant.sample_chance(start, SeededChance(42))})[0]
    for seat in range(4):
        assert game.view(seat) == variant.view(dealt, seat)


def test_unseeded_resets_follow_the_last_seed() -> None:
    a, b = env(), env()
    a.reset(seed=5)
    b.reset(seed=5)
    a.reset()
    b.reset()
    assert a.seed == b.seed and a.view(0) == b.view(0)
    a.reset()
    assert a.seed != b.seed


@pytest.mark.parametrize("options", [{}, {"professional": True, "players": 6}])
def test_the_observation_is_the_sdk_view_and_nothing_else(options: dict[str, object]) -> None:
    """Each observation equals the one of the view the SDK gets over the wire, and dealing the other
    seats other hidden cards (the same view) changes nothing."""
    game = env(**options)
    variant = game.variant
    rng = random.Random(1)
    checked = 0
    for seed in range(3):
        game.reset(seed=seed)
        while game.agents and not game.terminations[game.agent_selection]:
            agent = game.agent_selection
            seat = game.possible_agents.index(agent)
            observed = game.observe(agent)
            view = game.view(seat)
            sdk_view = through_the_wire("classic", view, view.decision)
            assert np.array_equal(observed["observation"], game.encoding.observe(sdk_view))
            assert np.array_equal(observed["action_mask"], game.encoding.mask(sdk_view.decision))
            # Another deal of the unseen cards to the other seats: a state with the same view.
            unseen = list(view.unseen())
            rng.shuffle(unseen)
            hands = []
            for other in range(variant.players):
                if other == seat:
                    hands.append(view.hand)
                else:
                    hands.append(tuple(unseen[: len(view.hand)]))
                    del unseen[: len(view.hand)]
            real = game.game.state
            game.game.state = variant.from_view(view, hands)
            assert np.array_equal(game.observe(agent)["observation"], observed["observation"])
            checked += game.game.state.hands != real.hands
            game.game.state = real
            game.step(int(rng.choice(np.flatnonzero(observed["action_mask"]))))
    assert checked > 30


def test_an_illegal_index_plays_the_default_action_and_says_so() -> None:
    game = env()
    game.reset(seed=0)
    view = game.view(0)
    not_held = next(c for c in range(1, 105) if c not in view.hand)
    game.step(not_held - 1)
    assert game.infos["player_0"] == {"illegal_action": True}
    for _ in range(3):
        game.step(int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0]))
    played = dict(game.transcript().steps[-1])
    assert played[0] == min(view.hand)  # classic's default action: the lowest card


def test_rewards_are_minus_the_bull_heads_taken() -> None:
    game = env(hands=1, target=None)
    random_episode(game, 9, random.Random(9))
    outcome = game.game.outcome()
    totals = [0.0] * 4
    game.reset(seed=9)
    rng = random.Random(9)
    while game.agents:
        agent = game.agent_selection
        observation, _, terminated, _, _ = game.last()
        totals[game.possible_agents.index(agent)] = (
            game._cumulative_rewards[agent] + totals[game.possible_agents.index(agent)]
        )
        if terminated:
            game.step(None)
            continue
        game.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert totals == [-s for s in outcome.scores]


def test_the_seat_env_plays_its_seat_against_the_named_bots() -> None:
    seat = SeatEnv(env(hands=1, target=None), "random,heuristic,mc", seat=2)
    seat.reset(seed=4)
    assert seat.game.agent_selection == "player_2"
    returns = seat_returns(seat, range(2), lambda obs, info: int(np.flatnonzero(info["action_mask"])[0]))
    assert all(r <= 0 for r in returns)
    again = seat_returns(seat, range(2), lambda obs, info: int(np.flatnonzero(info["action_mask"])[0]))
    assert returns == again


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: env(players=11), "players"),
        (lambda: env(colour="red"), "unknown option -o colour="),
        (lambda: SeatEnv(env(), "random,random"), "3 opponents for a 4-player game, got 2"),
        (lambda: SeatEnv(env(), "random", seat=4), "seats 0 … 3"),
        (lambda: env(render_mode="rgb_array"), "render_mode"),
    ],
)
def test_bad_settings_fail_with_one_clear_line(make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((ValueError, ConfigError)) as error:
        make()
    assert message in str(error.value) and "\n" not in str(error.value)


def test_an_unknown_opponent_names_the_reference_bots() -> None:
    with pytest.raises(ValueError) as error:
        SeatEnv(env(), "randm")
    assert "randm" in str(error.value) and "heuristic" in str(error.value)


def test_config_defaults_match_the_engine() -> None:
    assert classic_encoding().config == ClassicConfig()


@pytest.mark.parametrize("variant", ["classic", "6nimmt", "junior-experts", "brettspiel", "anniversary"])
def test_every_game_is_made_by_name_and_registered_with_gymnasium(variant: str) -> None:
    import gymnasium

    from envs import GAMES, make_env
    from referee.rules.registry import find_variant

    name = find_variant(variant).name
    assert make_env(variant).variant.name == name
    seat = gymnasium.make(f"sixnimmt/{name}-v0", opponents="random", seat=1)
    check_env(seat.unwrapped)
    _, info = seat.reset(seed=0)
    assert info["action_mask"].any()
    assert set(GAMES) == {
        "classic",
        "junior-basic",
        "junior-advanced",
        "junior-experts",
        "board",
        "anniversary",
    }


def test_the_environments_are_the_ones_the_game_specs_name() -> None:
    """envs lists no game by hand: each installed game's GameSpec.envs names its variants' makers."""
    from envs import GAMES
    from referee.rules.registry import VARIANTS
    from referee.rules.spec import installed_games, resolve

    assert {variant: ref for game in installed_games() for variant, ref in game.envs.items()} == GAMES
    assert set(GAMES) == {cls.name for cls in VARIANTS}
    for variant, ref in GAMES.items():
        assert resolve(ref)(players=2).variant.name == variant


def test_an_unknown_game_is_refused_in_one_line_naming_the_games() -> None:
    from envs import make_env
    from referee.rules.errors import UnknownVariantError

    with pytest.raises(UnknownVariantError) as error:
        make_env("chess")
    assert "classic" in str(error.value) and "\n" not in str(error.value)


def test_a_saved_episode_is_a_transcript_sixnimmt_verify_accepts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from testkit import sixnimmt

    game = env(players=3, hands=2, target=None)
    random_episode(game, 11, random.Random(11))
    path = tmp_path / "episode.json"
    path.write_text(json.dumps(game.transcript().to_json()))
    result = sixnimmt(tmp_path, "verify", str(path))
    assert result.returncode == 0 and result.stdout.startswith("ok: sha256:"), result.stderr
    assert f"scores {list(game.game.outcome().scores)}" in result.stdout


def test_the_seat_env_takes_bot_classes_and_flags_an_illegal_index() -> None:
    from games.classic.bots import HeuristicBot, LowestBot

    seat = SeatEnv(env(hands=1, target=None), [HeuristicBot, LowestBot, HeuristicBot])
    assert [type(f()) for f in seat.factories] == [HeuristicBot, LowestBot, HeuristicBot]
    _, info = seat.reset(seed=8)
    hand = seat.game.view(0).hand
    illegal = next(i for i in range(104) if not info["action_mask"][i])
    _, _, _, _, info = seat.step(illegal)
    assert info["illegal_action"] is True
    assert dict(seat.game.transcript().steps[1])[0] == min(hand)  # the default action: the lowest card
