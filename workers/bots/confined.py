"""Bots named on a command line, run as a league runs them: each in the sandbox.

``sixnimmt play --human`` seats bots its user names (reference bots, bot files, a ``bot.toml``'s
directory). Each is packed as ``bot submit`` packs it (:func:`workers.bots.entrants.find`: the same
limits, nothing stored), unpacked into a directory of its own under a root only this process
enters, and started by the sandbox that confines a league's bots (:func:`workers.sandbox.sandbox_for`).
A bare command (``cmd:…``) names no files to confine: put it in a ``bot.toml``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from workers.bots.artifacts import bot_spec, unpack_readable
from workers.bots.entrants import find
from workers.sandbox import Sandbox, sandbox_for


def confine(
    specs: Mapping[str, str], variant: str, root: Path, private: Path
) -> tuple[dict[str, str], Sandbox]:
    """``specs`` (entrant name → bot spec) as specs of their packed copies under ``root``, and the
    sandbox that starts them (its bots' private directories in ``private``).

    ``root`` holds the referee's socket too, as a league block's does: it becomes 0700, each bot's
    directory readable by the bot's user, which the sandbox binds into a root of the bot's own.
    Raises what packing raises (:class:`~workers.bots.artifacts.SubmissionError`, a file that is not
    there) and :class:`~workers.sandbox.SandboxError` where the sandbox cannot run.
    """
    found = find(None, list(specs.values()), variant, what="table", slips=False)
    os.chmod(root, 0o700)
    os.chmod(private, 0o711)
    confined: dict[str, str] = {}
    for number, (name, entrant) in enumerate(zip(specs, found.entrants, strict=True)):
        directory = root / f"bot{number}"
        unpack_readable(entrant.content, directory)
        confined[name] = bot_spec(directory, entrant.entry_point)
    launch = sandbox_for(root)
    launch.workdir = private
    return confined, launch
