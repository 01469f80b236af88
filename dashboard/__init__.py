"""The web dashboard and JSON API over the league store (issue #8)."""
