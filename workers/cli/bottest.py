"""``sixnimmt bot test NEW --base OLD``: an SPRT test stored as a league, played, and reported.

The statistics and the plan of deals are pure (:mod:`workers.planning.sprt`); this module resolves the
bots, stores the test (a ``leagues`` row with format ``sprt`` and a ``stopping`` rule of kind
``sprt``), plays it with the league machinery (local pool or Celery, round after round through
:mod:`workers.planning.rounds`) and reads its state back for the command line and the dashboard.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot_sdk.bots import REFERENCE_BOTS
from referee.clikit.options import json_flag, parse_options, variant_options
from referee.clikit.progress import progress_bar
from referee.rules.registry import find_variant, make_variant
from referee.rules.spec import game_of
from referee.settings import load as load_settings
from workers.cli import running
from workers.planning import sprt
from workers.planning.deals import draw as draw_seed

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from workers.store import repo


def default_field(variant: str) -> str:
    """The field when ``--against`` is not given: the game's ``default_field`` (classic's
    ``random,heuristic,mc``), or else the variant's reference bots."""
    canonical = find_variant(variant).name
    game = game_of(canonical)
    if game is not None and game.default_field:
        return game.default_field
    return ",".join(REFERENCE_BOTS.get(canonical, {}))


def is_test(league: repo.League) -> bool:
    """Whether a stored league is an SPRT test."""
    return bool(league.stopping) and (league.stopping or {}).get("kind") == sprt.KIND


def score_unit(variant: str) -> str:
    """What a score counts, for messages (the game's ``score_unit``)."""
    game = game_of(variant)
    return game.score_unit if game is not None else "points"


def create(
    engine: Engine,
    new: str,
    base: str,
    field: Sequence[str],
    *,
    name: str | None = None,
    variant: str = "classic",
    config: Mapping[str, Any] | None = None,
    margin: float = sprt.DEFAULT_MARGIN,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_deals: int = sprt.DEFAULT_MAX_DEALS,
    seed: int | None = None,
) -> repo.League:
    """Check everything, then store the test and its first batch of deals; nothing is stored on error.

    Entrants are NEW (position 0), OLD (1), then the field, resolved like league entrants. Without a
    ``seed``, the seed and a deal key are drawn (:func:`workers.planning.deals.draw`): the deals are secret.
    """
    # The league, the bots and the store load SQLAlchemy: not when the command line registers ``bot test``.
    from workers import league as leagues
    from workers.bots import entrants
    from workers.store import repo

    settings = sprt.Settings(margin=margin, alpha=alpha, beta=beta, max_deals=max_deals, new=0, base=1)
    if not field:
        raise sprt.SprtError("the field is empty: NEW and OLD each need opponents (--against)")
    canonical = find_variant(variant).name
    table_size = 1 + sum(w.count for w in entrants.parse(field))
    game = {**dict(config or {}), "players": table_size}
    make_variant(canonical, game)  # a bad config fails before anything is stored
    if name is None:
        name = _free_name(engine, f"test-{_label(new)}-vs-{_label(base)}")
    repo.check_name("league", name)  # before any bot is checked or stored
    leagues.must_be_free(engine, name, hint=f" (resume a test with 'sixnimmt league run {name}')")
    for ref in (new, base):
        if entrants.parse([ref]) != [entrants.Wanted(ref.strip())]:
            raise sprt.SprtError(f"NEW and OLD are one bot each, not {ref!r}")
    head = entrants.find(engine, [new, base], canonical, what="test", slips=False)
    if entrants.same(*head.entrants):
        raise sprt.SprtError(f"NEW and OLD are the same bot version ({new}): test a new version")
    rest = entrants.find(engine, field, canonical, what="test")  # NEW or OLD may be in the field too
    for found in (head, rest):
        entrants.check(found)
    versions = [*head.entrants, *rest.entrants]
    seed, deal_key = draw_seed(seed)
    blocks = sprt.first_blocks(seed, len(versions), settings)
    repo.create_league(
        engine,
        name,
        variant=canonical,
        config=game,
        seed=seed,
        format=sprt.FORMAT,
        table_size=table_size,
        deals=settings.max_deals,
        entrants=versions,
        planned=[(b.number, b.seed, b.entrants) for b in blocks],
        stopping=settings.to_json(),
        deal_key=deal_key,
    )
    return repo.find_league(engine, name)


def undecided(
    engine: Engine,
    new: str,
    base: str,
    field: Sequence[str],
    *,
    variant: str = "classic",
    config: Mapping[str, Any] | None = None,
    margin: float = sprt.DEFAULT_MARGIN,
    alpha: float = 0.05,
    beta: float = 0.05,
) -> repo.League | None:
    """The latest stored test of this default name (``test-NEW-vs-OLD``, ``-2``, …) on the same bot
    versions (NEW, OLD and the field), game and SPRT settings whose SPRT has not decided: one
    that ran out of deals (inconclusive) or was stopped; ``None`` when there is none. A finished
    test with a remote entrant is not extended: its seed is published, and a bot played from its
    author's machine could compute the extension's deals from it."""
    # The bots and the store load SQLAlchemy: not when the command line registers ``bot test``.
    from workers.bots import accounts, entrants
    from workers.store import repo

    canonical = find_variant(variant).name
    stem = f"test-{_label(new)}-vs-{_label(base)}"
    names = [row["name"] for row in repo.list_leagues(engine)]
    named = [n for n in names if n == stem or re.fullmatch(re.escape(stem) + r"-\d+", n)]
    if not named:
        return None
    wanted = [
        *entrants.find(engine, [new, base], canonical, what="test", slips=False).entrants,
        *entrants.find(engine, field, canonical, what="test").entrants,
    ]
    game = {**dict(config or {}), "players": len(wanted) - 1}
    for name in reversed(named):  # the latest first
        league = repo.find_league(engine, name)
        if not is_test(league) or league.variant != canonical or league.config != game:
            continue
        settings = sprt.Settings.from_json(league.stopping or {})
        if (settings.margin, settings.alpha, settings.beta) != (margin, alpha, beta):
            continue
        if len(league.entrants) != len(wanted) or not all(
            entrants.same(a, b) for a, b in zip(league.entrants, wanted, strict=True)
        ):
            continue
        if report(engine, league)["verdict"] in (sprt.H0, sprt.H1):
            return None  # the latest such test decided: a rerun is a new test
        if repo.league_phase(engine, league.id) == "finished" and any(
            v.entry_point.startswith(accounts.REMOTE_ENTRANT) for v in league.entrants
        ):
            # Its seed is published: a bot played from its author's machine could know the deals.
            return None
        return league
    return None


def extend(engine: Engine, league: repo.League, more_deals: int) -> tuple[repo.League, int]:
    """Give an undecided test ``more_deals`` more deals than it has planned (when it spent its
    budget) and reopen it; returns it and how many deals it had. Its deals go on from its seed."""
    # The store loads SQLAlchemy: not when the command line registers ``bot test``.
    from workers.store import repo

    settings = sprt.Settings.from_json(league.stopping or {})
    planned = len(repo.blocks_of(engine, league.id)) // 2
    if planned >= settings.max_deals:
        budget = planned + max(1, more_deals)
        grown = sprt.Settings.from_json({**settings.to_json(), "max_deals": budget})
        repo.reopen_league(engine, league.id, stopping=grown.to_json(), deals=budget)
    return repo.find_league(engine, league.name), planned


def _label(ref: str) -> str:
    """A bot reference as part of a league name (characters a name may not hold become ``_``)."""
    text = Path(ref).stem if ref.endswith(".py") or Path(ref).is_dir() else ref
    return re.sub(r"[^A-Za-z0-9_.+\-@]", "_", text.replace("/", "-"))[:40]


def _free_name(engine: Engine, stem: str) -> str:
    # The store loads SQLAlchemy: not when the root command line registers ``bot test``.
    from workers.store import repo

    taken = {row["name"] for row in repo.list_leagues(engine)}
    if stem not in taken:
        return stem
    number = 2
    while f"{stem}-{number}" in taken:
        number += 1
    return f"{stem}-{number}"


def report(engine: Engine, league: repo.League) -> dict[str, Any]:
    """A test's settings, state and verdict as JSON (the command line and the dashboard)."""
    # The bots and the store load SQLAlchemy: not when the root command line registers ``bot test``.
    from workers.bots import entrants
    from workers.store import repo

    settings = sprt.Settings.from_json(league.stopping or {})
    blocks = repo.blocks_of(engine, league.id)
    game = make_variant(league.variant, league.config)
    differences = sprt.paired_differences(
        repo.league_results(engine, league.id), blocks, settings, higher_is_better=game.higher_is_better
    )
    state = sprt.state(differences, settings)
    names = entrants.labels(league.entrants)
    field = [names[p] for p in sprt.field_of(len(names), settings)]
    pending = sum(b.status != "done" for b in blocks)
    decided = state.verdict in (sprt.H0, sprt.H1)
    return {
        "test": league.name,
        "variant": league.variant,
        "new": names[settings.new],
        "base": names[settings.base],
        "field": field,
        "settings": settings.to_json(),
        "unit": score_unit(league.variant),
        "higher_is_better": game.higher_is_better,
        **state.to_json(),
        "games": 2 * state.deals * league.table_size,
        "deals_planned": len(blocks) // 2,
        "finished": decided or (state.verdict == sprt.INCONCLUSIVE and not pending),
    }


def verdict_line(info: Mapping[str, Any]) -> str:
    """The verdict in words."""
    margin = f"{info['settings']['margin']:g} {info['unit']} per game"
    return sprt.verdict_text(info["verdict"], info["new"], info["base"], margin, info["deals"])


def print_report(info: Mapping[str, Any]) -> None:
    """The test's outcome as text."""
    s = info["settings"]
    print(
        f"test {info['test']}: {info['new']} against {info['base']}, field {', '.join(info['field'])};"
        f" {info['variant']}; margin {s['margin']:g} {info['unit']} per game, alpha {s['alpha']:g},"
        f" beta {s['beta']:g}, at most {s['max_deals']} deals"
    )
    print(verdict_line(info))
    lower, upper = info["bounds"]
    better = "NEW better" if info["mean_difference"] >= 0 else "OLD better"
    print(
        f"LLR {info['llr']:.2f}{' (clamped)' if info['clamped'] else ''} in [{lower:.2f}, {upper:.2f}]"
        f" after {info['deals']} deals, {info['games']} games;"
        f" mean paired difference {info['mean_difference']:+.2f} {info['unit']} per game ({better}),"
        f" sd of a deal {info['sd']:.2f}"
    )


# -- the command -----------------------------------------------------------------------------


def register(bots: Any, guard: Callable[..., Any]) -> None:
    """Add ``bot test`` to the ``bot`` command group."""
    p = bots.add_parser(
        "test",
        help="SPRT: does NEW beat OLD by a margin? Paired duplicate deals against the same field",
    )
    p.add_argument("new", help="the new version: stored bot (name or name@N), reference name, or .py file")
    p.add_argument("--base", required=True, help="the old version to compare against")
    p.add_argument(
        "--against",
        help="the field, comma-separated; NAME*N enters a bot N times (default: the game's field,"
        " classic's random,heuristic,mc; for another game its reference bots)",
    )
    p.add_argument(
        "--margin",
        type=float,
        default=sprt.DEFAULT_MARGIN,
        help="H1: NEW better by this much score per game, in NEW's favour (default %(default)g, for"
        " classic games to 66)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="false positives: H1 accepted when δ = 0")
    p.add_argument("--beta", type=float, default=0.05, help="false negatives: H0 accepted when δ = margin")
    p.add_argument("--max-deals", type=int, default=sprt.DEFAULT_MAX_DEALS, help="budget of deals")
    p.add_argument(
        "--name",
        help="the test's league name (default test-NEW-vs-OLD; a rerun on the same bots extends the"
        " latest such test the SPRT has not decided, by --max-deals more deals)",
    )
    p.add_argument(
        "--new",
        dest="fresh",
        action="store_true",
        help="start a fresh test even when an undecided one of the same bots is stored",
    )
    variant_options(p)
    p.add_argument(
        "--seed",
        type=int,
        help="the test's seed: its deals then follow from it alone, as secret as it is (default: a random"
        " seed and deal key, published once the test is finished; docs/league.md#seeds-and-secrets)",
    )
    p.add_argument("--local", action="store_true", help="use the local process pool even with a broker set")
    p.add_argument("--processes", type=int, default=0, help="local pool size")
    json_flag(p)
    p.set_defaults(func=guard(cmd_test, creates=True))


def cmd_test(args: argparse.Namespace, engine: Engine) -> int:
    """Create the test, play it to a verdict, print the outcome."""
    against = default_field(args.variant) if args.against is None else args.against
    field = [r.strip() for r in against.split(",") if r.strip()]
    config = parse_options(args.option)
    found = None
    if args.name is None and not args.fresh:
        found = undecided(
            engine,
            args.new,
            args.base,
            field,
            variant=args.variant,
            config=config,
            margin=args.margin,
            alpha=args.alpha,
            beta=args.beta,
        )
    if found is not None:
        league, had = extend(engine, found, args.max_deals)
        budget = sprt.Settings.from_json(league.stopping or {}).max_deals
        print(
            f"sixnimmt: extending test {league.name}, undecided after {had} deals: up to {budget - had}"
            " more deals until the SPRT decides ('--new' starts a fresh test)",
            file=sys.stderr,
        )
        return _play_and_report(engine, league, args)
    league = create(
        engine,
        args.new,
        args.base,
        field,
        name=args.name,
        variant=args.variant,
        config=config,
        margin=args.margin,
        alpha=args.alpha,
        beta=args.beta,
        max_deals=args.max_deals,
        seed=args.seed,
    )
    return _play_and_report(engine, league, args)


def _play_and_report(engine: Engine, league: repo.League, args: argparse.Namespace) -> int:
    finished = play(engine, league, json_output=args.json, local=args.local, processes=args.processes)
    info = report(engine, league)
    if args.json:
        print(json.dumps(info))
    else:
        print_report(info)
    return 0 if finished else 130


def play(engine: Engine, league: repo.League, *, json_output: bool, local: bool, processes: int) -> bool:
    """Play a stored test until its rule says it is finished (the league run loops, progress bar).

    Returns ``False`` when interrupted (Ctrl-C): the local pool gives its blocks back, Celery's
    workers go on, and ``sixnimmt league run NAME`` resumes the test.
    """
    # The store loads SQLAlchemy: not when the root command line registers ``bot test``.
    from workers.store import repo

    settings = load_settings()
    todo = [b for b in repo.blocks_of(engine, league.id) if b.status != "done"]
    with progress_bar(len(todo), "blocks", json_output) as bar:
        try:
            running.play(engine, league, settings, bar, local=local, processes=processes)
        except KeyboardInterrupt:
            print(
                f"sixnimmt: stopped test {league.name} ('sixnimmt league run {league.name}' goes on);"
                " where it stands:",
                file=sys.stderr,
            )
            return False
    return True
