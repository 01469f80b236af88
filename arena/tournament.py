"""The tournament planner and a local round-robin of bots with duplicate deals (platform side).

Planning is pure: every table of ``k`` entrants out of ``n`` is played as *duplicate blocks*,
one seeded deal replayed once per seat rotation so that the luck of the deal cancels out.
Seeds derive from the tournament seed, so the same tournament plans and plays identically.
Games (each rotation of each block) run on a local process pool, as evenly spread as the gRPC
referee spreads them over one process per bot; standings give each entrant's mean score per
game with a 95% t interval over blocks.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from bot_sdk import command
from bot_sdk.loader import load_bot, spec_label
from bot_sdk.play import play_match
from referee.clikit.stats import t_interval
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed


@dataclass(frozen=True, slots=True)
class Block:
    """One table's deal, played once per seat rotation."""

    number: int
    entrants: tuple[int, ...]
    """Indices into the tournament's entrant list, in seat order of the first rotation."""
    seed: int

    def seatings(self) -> list[tuple[int, ...]]:
        """The seat orders: every rotation of the table."""
        k = len(self.entrants)
        return [self.entrants[r:] + self.entrants[:r] for r in range(k)]


def plan_round_robin(entrants: int, table_size: int, deals: int, seed: int) -> list[Block]:
    """Every table of ``table_size`` out of ``entrants``, each with ``deals`` duplicate blocks."""
    if not 2 <= table_size <= entrants:
        raise ValueError(f"a table seats 2 to {entrants} entrants, got {table_size}")
    if deals < 1:
        raise ValueError(f"deals must be at least 1, got {deals}")
    blocks = []
    for table, members in enumerate(itertools.combinations(range(entrants), table_size)):
        for deal in range(deals):
            blocks.append(Block(len(blocks), members, derive_seed(seed, "table", table, "deal", deal)))
    return blocks


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """One played match: who sat where and how it ended."""

    block: int
    seating: tuple[int, ...]
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    digest: str
    faults: tuple[int, ...] = ()
    """Faults per seat (remote play only: the local arena stops on the first bot error)."""


LOCAL_SEAT_KEY = b"sixnimmt-arena local tournament"
"""Seat-seed key of local tournaments: fixed, so they replay exactly (their bots are trusted;
leagues of submitted bots use a secret key per league)."""


def play_block_in_process(
    block: Block,
    variant: str,
    config: Mapping[str, Any],
    specs: Sequence[str],
    seat_key: bytes = LOCAL_SEAT_KEY,
) -> list[MatchRecord]:
    """Play all rotations of one block in this process."""
    return play_games([(block, r) for r in range(len(block.entrants))], variant, config, specs, seat_key)


def play_games(
    games: Sequence[tuple[Block, int]],
    variant: str,
    config: Mapping[str, Any],
    specs: Sequence[str],
    seat_key: bytes = LOCAL_SEAT_KEY,
) -> list[MatchRecord]:
    """Play ``(block, rotation)`` games in this process, in the order given."""
    game = make_variant(variant, config)
    classes = [load_bot(spec, variant) for spec in specs]
    records = []
    for block, rotation in games:
        seating = block.seatings()[rotation]
        result = play_match(
            game,
            [classes[e] for e in seating],
            block.seed,
            names=[spec_label(specs[e]) for e in seating],
            seat_key=seat_key,
        )
        records.append(
            MatchRecord(
                block.number,
                seating,
                result.outcome.scores,
                result.outcome.ranks,
                result.transcript.digest(),
            )
        )
    return records


TASKS_PER_PROCESS = 8
"""In-process pool: the games go out in about this many tasks per process (one game per task when
there are fewer), so that no process idles while another still has a queue of games."""


def game_tasks(blocks: Sequence[Block], processes: int) -> list[list[tuple[Block, int]]]:
    """Every game of ``blocks`` in plan order, cut into runs of consecutive games for the pool.

    A block is not a unit of work: its rotations play the same deal but are independent games,
    and a few heavy blocks (a table with an expensive bot) would keep one process busy while
    the others wait. Runs of consecutive games keep a pool's overhead small on big plans.
    """
    games = [(block, rotation) for block in blocks for rotation in range(len(block.entrants))]
    size = max(1, len(games) // (max(1, processes) * TASKS_PER_PROCESS))
    return [games[i : i + size] for i in range(0, len(games), size)]


@dataclass(slots=True)
class Standing:
    """One entrant's line in the standings."""

    name: str
    games: int = 0
    mean_score: float = 0.0
    low: float | None = None
    high: float | None = None
    """The 95% t interval of the mean score over blocks; ``None`` below two blocks."""
    mean_rank: float = 0.0
    wins: float = 0.0
    """Games ranked first; a win shared by several seats counts for each of them."""
    faults: int = 0
    block_means: list[float] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {
            "name": self.name,
            "games": self.games,
            "mean_score": round(self.mean_score, 3),
            "interval95": None
            if self.low is None or self.high is None
            else [round(self.low, 3), round(self.high, 3)],
            "mean_rank": round(self.mean_rank, 3),
            "wins": self.wins,
            "faults": self.faults,
        }


def standings(
    names: Sequence[str],
    records: Iterable[MatchRecord],
    *,
    higher_is_better: bool,
) -> list[Standing]:
    """Each entrant's mean score per game and interval, best first."""
    per_block: dict[tuple[int, int], list[int]] = {}
    ranks: dict[int, list[int]] = {i: [] for i in range(len(names))}
    faults = [0] * len(names)
    for record in records:
        for seat, entrant in enumerate(record.seating):
            per_block.setdefault((entrant, record.block), []).append(record.scores[seat])
            ranks[entrant].append(record.ranks[seat])
            if record.faults:
                faults[entrant] += record.faults[seat]
    table = [Standing(name) for name in names]
    for (entrant, _), scores in sorted(per_block.items()):
        table[entrant].block_means.append(statistics.fmean(scores))
        table[entrant].games += len(scores)
    for entrant, line in enumerate(table):
        if not line.block_means:
            continue
        line.mean_score = statistics.fmean(line.block_means)
        line.low, line.high = t_interval(line.block_means)
        line.mean_rank = statistics.fmean(ranks[entrant])
        line.wins = sum(1 for r in ranks[entrant] if r == 1)
        line.faults = faults[entrant]
    sign = -1 if higher_is_better else 1
    return sorted(table, key=lambda s: (sign * s.mean_score, s.mean_rank, s.name))


def run_tournament(
    specs: Sequence[str],
    *,
    variant: str = "classic",
    config: Mapping[str, Any] | None = None,
    table_size: int = 4,
    deals: int = 2,
    seed: int = 1,
    processes: int = 1,
    remote: bool = False,
    time_control: Mapping[str, int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Standing], list[MatchRecord]]:
    """Plan and play a round-robin; return the standings and every match record.

    In-process, the games run on a pool of ``processes`` (see :func:`game_tasks`). With
    ``remote``, a local referee runs in its own process and every entrant is one bot process
    that plays all of its matches at once over one stream. ``progress`` counts games.
    """
    config = dict(config or {})
    game = make_variant(variant, {**config, "players": table_size})
    for spec in specs:
        if not (remote and command.preload(spec)):  # fail before any game is played
            load_bot(spec, variant)
    blocks = plan_round_robin(len(specs), table_size, deals, seed)
    config["players"] = table_size
    names = unique_names([spec_label(s) for s in specs])
    records: list[MatchRecord] = []
    if remote:
        records = _play_on_referee(blocks, names, specs, variant, config, progress, time_control or {})
    elif processes <= 1:
        for block in blocks:
            for rotation in range(table_size):
                records.extend(play_games([(block, rotation)], variant, config, specs))
                if progress:
                    progress(1)
    else:
        tasks = game_tasks(blocks, processes)
        done: list[list[MatchRecord]] = [[] for _ in tasks]
        with ProcessPoolExecutor(max_workers=min(processes, len(tasks))) as pool:
            futures = {pool.submit(play_games, t, variant, config, specs): n for n, t in enumerate(tasks)}
            for future in as_completed(futures):
                number = futures[future]
                done[number] = future.result()
                if progress:
                    progress(len(done[number]))
        records = [record for task in done for record in task]  # plan order, as played serially
    return standings(names, records, higher_is_better=game.higher_is_better), records


def _play_on_referee(
    blocks: Sequence[Block],
    names: Sequence[str],
    specs: Sequence[str],
    variant: str,
    config: Mapping[str, Any],
    progress: Callable[[int], None] | None,
    time_control: Mapping[str, int],
) -> list[MatchRecord]:
    from arena.matches import MatchPlan, play_matches

    seatings = [(block, seating) for block in blocks for seating in block.seatings()]
    plans = [MatchPlan(tuple(names[e] for e in seating), block.seed) for block, seating in seatings]
    run = play_matches(
        dict(zip(names, specs, strict=True)),
        plans,
        variant=variant,
        config=config,
        progress=progress,
        seat_key=LOCAL_SEAT_KEY,
        **time_control,
    )
    records = []
    for (block, seating), match in zip(seatings, run.matches, strict=True):
        if match.status != "finished":
            raise RuntimeError(
                f"match {match.match_id} of block {block.number} {match.status}: {match.error}"
            )
        seats = sorted(match.seats, key=lambda s: s.seat)
        records.append(
            MatchRecord(
                block.number,
                seating,
                tuple(s.score for s in seats),
                tuple(s.rank for s in seats),
                match.digest,
                tuple(sum(s.faults.values()) for s in seats),
            )
        )
    return records


def unique_names(names: list[str]) -> list[str]:
    """Display names made distinct: the second ``random`` becomes ``random#2``."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out
