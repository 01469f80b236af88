# Every target bootstraps its own environment: a .venv with the project installed editable.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench bench-quick golden proto clean image image-test chaos

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,server]'
	touch $(STAMP)

## The main job: a league of the example and reference bots on the embedded defaults (SQLite in
## the working directory, a local process pool), every bot its own sandboxed process over gRPC.
LEAGUE_BOTS ?= examples/cautious_bot.py,random,lowest,highest,heuristic,mc
run: $(STAMP)
	@name=demo-$$(date +%Y%m%d-%H%M%S); \
	$(BIN)/sixnimmt league create $$name --bots $(LEAGUE_BOTS) --deals 2 && \
	$(BIN)/sixnimmt league run $$name --local

## The whole suite: lint first, then every test (statistical and golden ones included).
test: lint
	$(BIN)/python -m pytest -n 2 -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy --strict referee/rules
	$(BIN)/lint-imports

## One JSON object per line: {"name", "value", "unit"}.
bench: $(STAMP)
	$(BIN)/python bench/run.py

bench-quick: $(STAMP)
	$(BIN)/python bench/run.py --quick

## Chaos on several hosts (network namespaces; needs root and ip netns; a few minutes): a league
## heals from each fault by itself. One bench line per figure: chaos.<scenario>.recovery_s, .ok.
chaos: $(STAMP)
	$(BIN)/python tests/chaos/run.py

## Rewrite the golden playthrough files; only on purpose, and review the diff.
golden: $(STAMP)
	$(BIN)/python tests/golden/regenerate.py

## Regenerate the wire code from proto/sixnimmt/v1 (the tests fail when it is stale).
proto: $(STAMP)
	$(BIN)/python proto/generate.py

## The container image (docs/deploy.md): `docker build` where an engine runs, else buildah on a base
## made from Debian's packages and the CPython the venv runs on (cached in /var/cache/sixnimmt-image;
## needs root).
IMAGE ?= localhost/sixnimmt-arena:dev
image: $(STAMP)
	IMAGE=$(IMAGE) PYTHON=$(abspath $(BIN)/python) tests/image/build.sh

## Every role from the built image, as the production overlay runs it; a league played through the
## image's worker (machine's PostgreSQL and Redis). CI runs it.
image-test: $(STAMP) image
	SIXNIMMT_TEST_IMAGE=$(IMAGE) $(BIN)/python -m pytest -q -p no:cacheprovider tests/image

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
