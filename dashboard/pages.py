"""The dashboard's templates and response headers, without Starlette: the league dashboard
(:mod:`dashboard.app`) and ``sixnimmt view`` (:mod:`dashboard.view`, Jinja2 alone) render the
same templates with the same environment and send the same headers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
]
"""No inline script or style is allowed to run: defence in depth behind the templates' escaping."""


def environment() -> jinja2.Environment:
    """The templates' environment: every template autoescaped, undefined names an error."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # every template, whatever its name: names in the store are hostile
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["when"] = _when
    return env


def _num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _when(value: str | None) -> str:
    return value.replace("T", " ").split("+")[0] if value else "–"
