"""The board game's pure rules engine (the rules layer: no I/O, no wire, nothing above)."""
