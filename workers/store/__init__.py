"""The league store: tables, migrations, the engine, and the reads and writes of a league."""
