"""The image tests run only under ``make image-test``, which builds the image and names it in
``SIXNIMMT_TEST_IMAGE``; in ``make test`` they skip, saying so. Once named, nothing skips: a
missing tool, image or service fails."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "deploy"))  # deploykit, kustomize_lite

IMAGE_VARIABLE = "SIXNIMMT_TEST_IMAGE"


@pytest.fixture(scope="session")
def image() -> str:
    """The image under test (``make image-test`` builds it and sets ``SIXNIMMT_TEST_IMAGE``)."""
    name = os.environ.get(IMAGE_VARIABLE, "")
    if not name:
        pytest.skip(f"run by `make image-test` (it builds the image and sets {IMAGE_VARIABLE})")
    return name
