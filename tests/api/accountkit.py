"""The participant's web pages' tests' kit: a browser without a browser, over HTTP with a cookie
jar (urllib), that follows no redirect by itself, so every answer's status is seen."""

from __future__ import annotations

import html
import re
import secrets
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from http.cookiejar import CookieJar
from typing import Any

from api.pages import SESSION_COOKIE


@dataclass
class Answer:
    status: int
    headers: Any
    body: str

    @property
    def location(self) -> str:
        return str(self.headers.get("location", ""))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Web:
    """One browser's cookies against the API's server at ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect)

    def request(
        self,
        path: str,
        data: bytes | None = None,
        headers: dict[str, str] | None = None,
        method: str | None = None,
    ) -> Answer:
        made = urllib.request.Request(self.url + path, data=data, headers=headers or {}, method=method)
        try:
            with self.opener.open(made, timeout=120) as response:
                return Answer(response.status, response.headers, response.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as exc:
            return Answer(exc.code, exc.headers, exc.read().decode("utf-8", "replace"))

    def get(self, path: str) -> Answer:
        return self.request(path)

    def post(self, path: str, fields: dict[str, str], origin: str | None = None) -> Answer:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if origin is not None:
            headers["Origin"] = origin
        return self.request(path, urllib.parse.urlencode(fields).encode(), headers, "POST")

    def post_files(
        self,
        path: str,
        fields: dict[str, str],
        files: dict[str, tuple[str, bytes]],
        origin: str | None = None,
    ) -> Answer:
        boundary = "----sixnimmt" + secrets.token_hex(8)
        parts = []
        for name, value in fields.items():
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            )
        for name, (filename, content) in files.items():
            head = (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n"
            )
            parts.append(head.encode() + content + b"\r\n")
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        if origin is not None:
            headers["Origin"] = origin
        return self.request(path, body, headers, "POST")

    def cookie(self, name: str) -> Any:
        return next((c for c in self.jar if c.name == name), None)

    def sign_in(self, key: str) -> Answer:
        form = self.get("/account/signin")
        assert form.status == 200, form
        answer = self.post("/account/signin", {"form": hidden(form.body, "form"), "key": key})
        assert answer.status == 303 and answer.location.endswith("/account"), answer
        assert self.cookie(SESSION_COOKIE) is not None
        return answer

    def csrf(self, path: str = "/account") -> str:
        page = self.get(path)
        assert page.status == 200, page
        return hidden(page.body, "csrf")


def hidden(body: str, name: str) -> str:
    """The value of the first hidden field ``name`` of a page."""
    found = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)">', body)
    assert found, f"no hidden field {name!r} in the page"
    return html.unescape(found.group(1))
