"""Transcripts: a match as (variant, config, seed, actions), replayable and verifiable.

A :class:`Playthrough` is a game in progress that records every step it applies: the seats'
actions and, as actions of :data:`~referee.rules.core.CHANCE`, every chance outcome drawn
from the match's seeded generator. The finished :class:`Transcript` replays to the very
same states and events, its :meth:`~Transcript.digest` is a SHA-256 over a canonical JSON
form (the same bytes on every machine), and :func:`verify` rejects a tampered one with a
message that names the first step that does not hold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, Action, Decision, Event, Outcome, Termination, Variant
from referee.rules.errors import RulesError, TranscriptError
from referee.rules.registry import make_variant

Step = tuple[tuple[int, Action], ...]
"""One applied step: ``(seat, action)`` pairs in seat order (chance is seat -1)."""

FORMAT = 1
"""The transcript format version."""


@dataclass(frozen=True, slots=True)
class Transcript:
    """Everything needed to recreate a match exactly."""

    variant: str
    engine_version: int
    config: Mapping[str, Any]
    seed: int
    steps: tuple[Step, ...]
    outcome: Outcome | None = None
    """The claimed result; :func:`verify` checks it."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    """Free annotations (seat names, faults): not covered by the digest, nor checked by :func:`verify`."""

    def to_json(self) -> dict[str, Any]:
        """The canonical JSON-ready form."""
        return {
            "format": FORMAT,
            "variant": self.variant,
            "engine_version": self.engine_version,
            "config": dict(self.config),
            "seed": self.seed,
            "steps": [[[seat, _to_list(action)] for seat, action in step] for step in self.steps],
            "outcome": None if self.outcome is None else self.outcome.to_json(),
            "meta": dict(self.meta),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Transcript:
        """Parse :meth:`to_json` output; malformed input raises :class:`TranscriptError`."""
        if not isinstance(data, Mapping):
            raise TranscriptError(f"a transcript is a JSON object, not {type(data).__name__}")
        try:
            if data.get("format") != FORMAT:
                raise TranscriptError(f"unknown transcript format {data.get('format')!r}")
            outcome = data.get("outcome")
            return cls(
                variant=str(data["variant"]),
                engine_version=int(data["engine_version"]),
                config=dict(data["config"]),
                seed=int(data["seed"]),
                steps=tuple(
                    tuple((int(seat), _to_action(action)) for seat, action in step) for step in data["steps"]
                ),
                outcome=None
                if outcome is None
                else Outcome(
                    tuple(outcome["scores"]),
                    tuple(outcome["ranks"]),
                    Termination(outcome["termination"]),
                ),
                meta=dict(data.get("meta") or {}),
            )
        except TranscriptError:
            raise
        except KeyError as exc:
            raise TranscriptError(f"malformed transcript: no {exc}") from exc
        except (TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise TranscriptError(f"malformed transcript: {exc}") from exc
        except RecursionError:
            raise TranscriptError("malformed transcript: nested too deeply") from None

    def canonical_bytes(self) -> bytes:
        """The bytes the digest covers: everything but ``meta``, as canonical JSON."""
        return _canonical_text(self.to_json()).encode()

    def digest(self) -> str:
        """A stable hash of the match: ``sha256:`` and 64 hex digits."""
        return _digest_of(self.to_json())

    def json_and_digest(self) -> tuple[dict[str, Any], str]:
        """:meth:`to_json` and :meth:`digest` from one conversion."""
        body = self.to_json()
        return body, _digest_of(body)

    def text_and_digest(self) -> tuple[str, str]:
        """The transcript as JSON text, and :meth:`digest`, from one encoding (a referee does
        both for every match it finishes).

        The text is the canonical JSON the digest covers with ``meta`` added as its last key:
        what is hashed is encoded once, and the text's beginning is exactly those bytes.
        """
        body = self.to_json()
        text = _canonical_text(body)
        digest = _text_digest(text)
        if "meta" in body:
            meta = _canonical_json(body["meta"])
            text = f'{text[:-1]},"meta":{meta}}}' if text != "{}" else f'{{"meta":{meta}}}'
        return text, digest


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _canonical_text(body: Mapping[str, Any]) -> str:
    """A transcript's :meth:`~Transcript.to_json` form as the digest covers it: without ``meta``."""
    return _canonical_json({key: value for key, value in body.items() if key != "meta"})


def _text_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _digest_of(body: Mapping[str, Any]) -> str:
    return _text_digest(_canonical_text(body))


class Playthrough:
    """A match in progress that records its steps; the one loop every runner drives."""

    def __init__(self, variant: Variant[Any, Any], seed: int) -> None:
        self.variant = variant
        self.seed = seed
        self.chance = SeededChance(seed)
        self.state: Any = variant.initial_state()
        self.steps: list[Step] = []

    def pending(self) -> tuple[Decision, ...]:
        """The decisions the match waits for (empty once it is over)."""
        return self.variant.pending(self.state)

    def apply(self, actions: Mapping[int, Action]) -> tuple[Event, ...]:
        """Apply the seats' actions, record them and return the public events."""
        self.state, events = self.variant.apply(self.state, actions)
        self.steps.append(tuple(sorted(actions.items())))
        return events

    def resolve_chance(self) -> tuple[Event, ...]:
        """Draw and apply the pending chance outcome."""
        return self.apply({CHANCE: self.variant.sample_chance(self.state, self.chance)})

    def outcome(self) -> Outcome | None:
        """The result once the match is over."""
        return self.variant.outcome(self.state)

    def transcript(self, meta: Mapping[str, Any] | None = None) -> Transcript:
        """The transcript of everything applied so far."""
        return Transcript(
            variant=self.variant.name,
            engine_version=self.variant.engine_version,
            config=self.variant.config_json(),
            seed=self.seed,
            steps=tuple(self.steps),
            outcome=self.outcome(),
            meta=dict(meta or {}),
        )


def replay(transcript: Transcript) -> tuple[Any, list[tuple[Event, ...]]]:
    """Recreate a match: the final state and the events of every step.

    Raises :class:`TranscriptError` when a step does not apply (wrong seats, illegal action).
    Chance outcomes are taken as recorded; :func:`verify` also checks them against the seed.
    """
    _, states, events = replay_states(transcript)
    return states[-1], events


def replay_states(
    transcript: Transcript,
) -> tuple[Variant[Any, Any], list[Any], list[tuple[Event, ...]]]:
    """The variant, every state (the initial one first) and every step's events of a match."""
    variant = variant_of(transcript)
    state = variant.initial_state()
    states = [state]
    events: list[tuple[Event, ...]] = []
    for number, step in enumerate(transcript.steps, 1):
        try:
            state, step_events = variant.apply(state, dict(step))
        except RulesError as exc:
            raise TranscriptError(f"step {number} does not apply: {exc}") from exc
        states.append(state)
        events.append(step_events)
    return variant, states, events


def verify(transcript: Transcript) -> Outcome:
    """Check a transcript completely and return its outcome.

    Every chance outcome must be the one the seed produces, every action legal, the game
    finished, and the claimed outcome the real one. The first violation raises
    :class:`TranscriptError`.
    """
    variant = variant_of(transcript)
    chance = SeededChance(transcript.seed)
    state = variant.initial_state()
    for number, step in enumerate(transcript.steps, 1):
        pending = variant.pending(state)
        if not pending:
            raise TranscriptError(f"step {number} comes after the end of the game")
        if pending[0].seat == CHANCE:
            expected = variant.sample_chance(state, chance)
            if step != ((CHANCE, expected),):
                raise TranscriptError(
                    f"step {number}: the chance outcome is not the one seed {transcript.seed} gives"
                )
        try:
            state, _ = variant.apply(state, dict(step))
        except RulesError as exc:
            raise TranscriptError(f"step {number} does not apply: {exc}") from exc
    outcome = variant.outcome(state)
    if outcome is None:
        raise TranscriptError(
            f"the transcript ends after {len(transcript.steps)} steps, before the game does"
        )
    if transcript.outcome is not None and transcript.outcome != outcome:
        raise TranscriptError(
            f"the claimed outcome {transcript.outcome.to_json()} is not the real one {outcome.to_json()}"
        )
    return outcome


def variant_of(transcript: Transcript) -> Variant[Any, Any]:
    """The variant a transcript was played with; a bad name, config or engine version is a
    :class:`TranscriptError`."""
    try:
        variant = make_variant(transcript.variant, transcript.config)
    except RulesError as exc:
        raise TranscriptError(f"transcript names a bad variant or config: {exc}") from exc
    if variant.engine_version != transcript.engine_version:
        raise TranscriptError(
            f"transcript is from engine version {transcript.engine_version} of {variant.name},"
            f" this is version {variant.engine_version}"
        )
    return variant


def _to_list(action: Action) -> Any:
    return list(map(_to_list, action)) if isinstance(action, tuple) else action


def _to_action(value: Any) -> Action:
    if isinstance(value, list):
        return tuple(_to_action(v) for v in value)  # type: ignore[misc]
    if type(value) is not int:
        raise TranscriptError(f"an action is an integer or a list of them, got {value!r}")
    return value
