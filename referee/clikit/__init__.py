"""The command line's toolkit, shared by the commands of every layer: tables, progress, options.

Beside the layers, as :mod:`referee.settings` is: the SDK's commands, the platform's, the league's
and the dashboard's print their tables (:mod:`.tables`, with :func:`.tables.printable` for
anything a bot or a stranger wrote), show their progress (:mod:`.progress`), parse their shared
options (:mod:`.options`) and report intervals of means (:mod:`.stats`) through it. It imports the
rules (their errors, a config's description) and nothing above them (docs/architecture.md, "The
command line's toolkit and the seeding contract").
"""
