"""Junior games through the local arena: transcripts verify, replay and reject tampering."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot_sdk.bots import reference_bot
from bot_sdk.play import play_match
from games.junior.rules.junior import JuniorBasic
from referee.rules import CHANCE, TranscriptError, make_variant
from referee.rules.transcript import Transcript, replay, verify

VARIANTS = [
    ("junior-basic", {}),
    ("junior-advanced", {}),
    ("junior-advanced", {"nuisance": True, "players": 3}),
    ("junior-experts", {"players": 6}),
]


def _match(name: str, config: dict[str, Any], seed: int = 11) -> Any:
    game = make_variant(name, config)
    bots = [reference_bot(name, "heuristic" if s % 2 else "random") for s in range(game.players)]
    return game, play_match(game, bots, seed)


@pytest.mark.parametrize(("name", "config"), VARIANTS)
def test_an_arena_game_verifies_and_replays(name: str, config: dict[str, Any]) -> None:
    game, result = _match(name, config)
    transcript = result.transcript
    assert verify(transcript) == result.outcome
    again = Transcript.from_json(json.loads(json.dumps(transcript.to_json())))
    assert again.digest() == transcript.digest()
    assert verify(again) == result.outcome
    state, _ = replay(again)
    assert game.outcome(state) == result.outcome
    assert sum(map(len, state.collected)) == sum(result.outcome.scores)


@pytest.mark.parametrize(("name", "config"), VARIANTS)
def test_the_same_seed_plays_the_same_game(name: str, config: dict[str, Any]) -> None:
    _, first = _match(name, config, seed=5)
    _, second = _match(name, config, seed=5)
    _, other = _match(name, config, seed=6)
    assert first.transcript.digest() == second.transcript.digest() != other.transcript.digest()


@pytest.mark.parametrize(("name", "config"), VARIANTS)
def test_a_changed_draw_is_rejected(name: str, config: dict[str, Any]) -> None:
    _, result = _match(name, config)
    steps = list(result.transcript.steps)
    draw = max(i for i, step in enumerate(steps) if step[0][0] == CHANCE and isinstance(step[0][1], int))
    ((seat, card),) = steps[draw]
    replacement = next(c for c in range(52) if c != card)
    steps[draw] = ((seat, replacement),)
    tampered = Transcript(**{**_fields(result.transcript), "steps": tuple(steps)})
    with pytest.raises(TranscriptError, match=f"step {draw + 1}"):
        verify(tampered)


def test_a_deck_read_from_a_file_is_embedded_so_the_transcript_replays_anywhere(tmp_path: Any) -> None:
    deck = JuniorBasic().deck.to_json()
    deck["cards"] = deck["cards"][6:]  # a house deck with one single Zebu card
    path = tmp_path / "house_deck.json"
    path.write_text(json.dumps(deck))
    game = make_variant("junior-basic", {"deck": str(path)})
    bot = reference_bot("junior-basic", "random")
    result = play_match(game, [bot] * game.players, 3)
    path.unlink()
    assert result.transcript.config["deck"]["cards"] == deck["cards"]
    assert verify(Transcript.from_json(json.loads(json.dumps(result.transcript.to_json())))) == result.outcome


def test_the_bundled_deck_is_named_not_embedded() -> None:
    _, result = _match("junior-experts", {})
    assert result.transcript.config == {
        "players": 4,
        "rows": 4,
        "deck": "junior_deck.json",
        "hand_size": 3,
        "row_limit": 6,
    }


def _fields(transcript: Transcript) -> dict[str, Any]:
    return {f: getattr(transcript, f) for f in transcript.__dataclass_fields__}
