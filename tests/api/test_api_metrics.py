"""The API's /metrics (requests by route template and status, uploads by outcome, validations, pending
validations) and its rate limits shared in Redis by two API processes' worth of apps."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from apikit import GOOD_BOT, site, wait_valid
from testkit import borrowed_redis

from api.limits import Buckets, RedisBuckets, make_buckets
from bot_sdk.client import ApiError, Client, pack_archive
from referee.settings import load


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis database no other test uses meanwhile (testkit.borrowed_redis)."""
    with borrowed_redis() as url:
        yield url


def _metrics(url: str) -> dict[str, float]:
    """The exposition's samples: ``name{labels}`` → value."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain")
        text = answer.read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def _value(samples: dict[str, float], name: str) -> float:
    return samples.get(name, 0.0)


def test_metrics_count_requests_by_route_uploads_and_validations(tmp_path: Path) -> None:
    with site(tmp_path) as api:
        before = _metrics(api.url)
        alice = api.client()
        sent = alice.post("/v1/submissions", query={"name": "counted"}, body=pack_archive(GOOD_BOT))
        wait_valid(alice, sent["id"])
        with pytest.raises(ApiError):
            alice.post("/v1/submissions", query={"name": "counted"}, body=b"not a tar")
        with pytest.raises(ApiError):
            Client(api.url, "snk_wrong_key").get("/v1/me")
        with pytest.raises(ApiError):
            alice.get("/v1/submissions/999999")
        after = _metrics(api.url)

        def grew(name: str) -> float:
            return _value(after, name) - _value(before, name)

        # By the route's template, never the id.
        route = (
            'sixnimmt_api_requests_total{method="GET",route="/v1/submissions/{submission_id}",status="%s"}'
        )
        assert grew(route % "200") >= 1 and grew(route % "404") == 1
        assert not any("999999" in name for name in after)
        assert grew('sixnimmt_api_requests_total{method="GET",route="/v1/me",status="401"}') == 1
        assert grew('sixnimmt_api_submissions_total{outcome="accepted"}') == 1
        assert grew('sixnimmt_api_submissions_total{outcome="refused"}') == 1
        assert grew('sixnimmt_validations_total{outcome="valid"}') == 1
        assert grew('sixnimmt_validation_duration_seconds_count{outcome="valid"}') == 1
        assert after["sixnimmt_api_pending_validations"] == 0
        assert any(re.match(r"sixnimmt_api_request_duration_seconds_bucket\{", name) for name in after)


def test_a_keys_rate_is_shared_by_the_apis_replicas_through_redis(tmp_path: Path, redis_url: str) -> None:
    env = {"SIXNIMMT_REDIS_URL": redis_url, "SIXNIMMT_API_RATE_PER_S": "1", "SIXNIMMT_API_BURST": "4"}
    with site(tmp_path, env) as one:
        from api.app import create_app, serving

        two = create_app(one.engine, load(env))  # a second replica over the same store and Redis
        with serving(two) as second:
            replicas = [Client(one.url, one.keys["alice"]), Client(second, one.keys["alice"])]
            answered = 0
            refused = None
            for turn in range(8):  # the burst of 4 is spent across both, alternately
                try:
                    replicas[turn % 2].get("/v1/me")
                    answered += 1
                except ApiError as exc:
                    refused = exc
                    break
            assert refused is not None and refused.status == 429, refused
            assert answered in (4, 5)  # 4, or 5 if a token came back meanwhile (1 a second)
            # Bob's key has its own bucket on both replicas.
            Client(second, one.keys["bob"]).get("/v1/me")


def test_buckets_in_redis_one_window_per_name_and_their_fallback(redis_url: str) -> None:
    settings = load({"SIXNIMMT_REDIS_URL": redis_url})
    shared = make_buckets(settings, "test", 0.5, 3)
    again = make_buckets(settings, "test", 0.5, 3)
    assert isinstance(shared, RedisBuckets)
    assert [shared.take("k"), again.take("k"), shared.take("k"), again.take("k")] == [True, True, True, False]
    assert again.retry_after("k") == 2  # a token every 2 s
    assert shared.take("other")
    # The broker's Redis when no SIXNIMMT_REDIS_URL; per process without either.
    assert isinstance(make_buckets(load({"SIXNIMMT_BROKER_URL": redis_url}), "t", 1, 1), RedisBuckets)
    assert isinstance(make_buckets(load({}), "t", 1, 1), Buckets)
    # A Redis that does not answer: this process's own buckets meanwhile, still limiting.
    gone = make_buckets(load({"SIXNIMMT_REDIS_URL": "redis://127.0.0.1:1/0"}), "t", 0.001, 2)
    assert [gone.take("k"), gone.take("k"), gone.take("k")] == [True, True, False]


def test_an_uploads_outcome_by_its_answer() -> None:
    from api.metrics import UPLOADS, outcome

    assert ("POST", "/account/upload") in UPLOADS and ("POST", "/v1/submissions") in UPLOADS
    expected = {202: "accepted", 303: "accepted", 400: "refused", 401: "unauthorized", 403: "unauthorized"}
    expected |= {409: "refused", 413: "refused", 422: "refused", 429: "limited", 500: "failed", 404: None}
    assert {status: outcome(status) for status in expected} == expected
