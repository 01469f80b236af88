# Every target bootstraps its own environment: a .venv with the project installed editable.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bubblewrap chromium node lint bench bench-quick golden proto clean image image-test chaos bytecode compiled

$(STAMP): pyproject.toml games/classic/sim/_native.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,server,rl]'
	touch $(STAMP)

## The project's bytecode, written ahead (an editable install leaves it to the first import). Where
## PYTHONDONTWRITEBYTECODE is set (as on this project's CI machines) no import writes it, so every
## process (each pool process, each sandboxed bot) would compile the project from source again:
## measured at 0.59x the local league's hands/s. compileall writes it whatever that variable says;
## it runs only when a source is newer than its last run ($(BYTECODE_STAMP)): with nothing to
## compile its worker processes cost 0.5 s of every `make run`. An import still checks each file's
## time stamp, so an edited file is compiled again rather than run stale.
BYTECODE_DIRS := api arena bot_sdk dashboard envs games referee sixnimmt workers examples tests bench
BYTECODE_STAMP := $(VENV)/.bytecode
bytecode: $(BYTECODE_STAMP)
$(BYTECODE_STAMP): $(STAMP) $(shell find $(BYTECODE_DIRS) -name '*.py' -not -path '*/node_modules/*' 2>/dev/null)
	@$(BIN)/python -m compileall -q -j 0 -x 'node_modules' $(BYTECODE_DIRS)
	@touch $(BYTECODE_STAMP)

## The referee's hot path compiled with mypyc (referee/accel.py, docs/architecture.md "The compiled
## hot path"): into the venv's own directory, never beside the sources, rebuilt when a source of
## referee/, games/ or the generated code changes. A referee uses the build only while it matches
## the sources (SIXNIMMT_COMPILED=auto), so a stale one is never run; about 20 s on 2 cores.
COMPILED := $(VENV)/sixnimmt-compiled/manifest.json
compiled: $(COMPILED)
$(COMPILED): $(STAMP) $(shell find referee games sixnimmt -name '*.py' -o -name '*.pyi' 2>/dev/null)
	@$(BIN)/python -m referee.accel build

## The main job: a league of the example and reference bots on the embedded defaults (a SQLite
## store, a local process pool), every bot its own sandboxed process over gRPC. One league, named
## $(LEAGUE): the first run creates it, later runs play what is left of it (an interrupted run goes
## on) and print its standings; `make run LEAGUE=another` plays a new one.
LEAGUE ?= demo
LEAGUE_BOTS ?= examples/cautious_bot.py,random,lowest,highest,heuristic,mc
LEAGUE_DEALS ?= 2
run: $(STAMP) bubblewrap bytecode compiled
	@if $(BIN)/sixnimmt league status '$(LEAGUE)' --json >/dev/null 2>&1; then \
		echo "make run: league $(LEAGUE) is in the store: playing what is left of it, then its standings" \
			"(a new league: make run LEAGUE=another-name)" >&2; \
	else \
		$(BIN)/sixnimmt league create '$(LEAGUE)' --bots '$(LEAGUE_BOTS)' --deals '$(LEAGUE_DEALS)' || exit $$?; \
	fi; \
	$(BIN)/sixnimmt league run '$(LEAGUE)' --local

## The whole suite: lint first, then every test (statistical and golden ones included). The
## dashboard's browser tests need chromium: `make test` installs it (see chromium below) or stops
## with the command to run, and the tests fail rather than skip if it is still missing.
test: lint bubblewrap chromium node bytecode compiled
	SIXNIMMT_TEST_BROWSER=required SIXNIMMT_TEST_NATIVE=required SIXNIMMT_TEST_COMPILED=required $(BIN)/python -m pytest -n 2 -q
	@echo "make test: the referee's and the wire's tests again, on the compiled hot path (SIXNIMMT_COMPILED=require)"
	SIXNIMMT_COMPILED=require $(BIN)/python -m pytest -n 2 -q tests/referee tests/golden tests/plugin \
		tests/junior/test_wire.py tests/board/test_wire.py tests/anniversary/test_anniversary_wire.py

## bubblewrap: every bot runs sandboxed under bwrap with a seccomp filter built by libseccomp, and
## the sandbox refuses to run a bot without either (docs/sandbox.md), so `make run` and `make test`
## need both. Missing, they are installed with apt-get when we are root (as on CI); otherwise this
## stops with the command to run.
BWRAP ?= $(shell command -v bwrap 2>/dev/null)
SECCOMP_LIB := $(shell /sbin/ldconfig -p 2>/dev/null | grep -c 'libseccomp\.so\.2 ')
bubblewrap:
	@if [ -n "$(BWRAP)" ] && [ -x "$(BWRAP)" ] && [ "$(SECCOMP_LIB)" != 0 ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "make: installing the bots' sandbox (apt-get install bubblewrap libseccomp2)" >&2; \
		export DEBIAN_FRONTEND=noninteractive; \
		{ apt-get update -qq && apt-get install -y -qq bubblewrap libseccomp2 >/dev/null; } || { \
			echo "make: ERROR: apt-get could not install bubblewrap and libseccomp2, which the bots' sandbox needs" >&2; exit 1; }; \
	else \
		echo "make: ERROR: every bot runs under bubblewrap (bwrap) and a seccomp filter (libseccomp2)," \
			"and one of them is not installed; run 'sudo apt-get update && sudo apt-get install -y" \
			"bubblewrap libseccomp2' (or your system's packages), then make again" >&2; exit 1; \
	fi

## Debian's chromium, which the dashboard's browser tests drive through Playwright (never a browser
## download of Playwright's own), looked for as tests/dashboard/test_browser.py does. Missing, it is
## installed with apt-get when we are root (as on CI); otherwise this stops with the command to run.
CHROMIUM ?= $(or $(SIXNIMMT_CHROMIUM),$(wildcard /usr/bin/chromium),$(shell command -v chromium 2>/dev/null))
chromium:
	@if [ -n "$(CHROMIUM)" ] && [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "make: installing chromium for the dashboard's browser tests (apt-get install chromium)" >&2; \
		export DEBIAN_FRONTEND=noninteractive; \
		{ apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } || { \
			echo "make: ERROR: apt-get could not install chromium, which the browser tests need" >&2; exit 1; }; \
	elif command -v apt-get >/dev/null; then \
		echo "make: ERROR: the dashboard's browser tests need chromium, which is not installed; run" \
			"'sudo apt-get update && sudo apt-get install -y chromium', then make test again" >&2; exit 1; \
	else \
		echo "make: ERROR: the dashboard's browser tests need chromium, which is not installed; install" \
			"it, then run 'SIXNIMMT_CHROMIUM=/path/to/chromium make test'" >&2; exit 1; \
	fi

## node: the example bot in JavaScript (examples/node_bot), which the command-bot tests play
## through `bot check` and in a league: its packages from the npm registry, exactly as its
## package-lock.json pins them (npm ci), and its one-file bundle, dist/bot.js (npm run build).
## node and npm must be installed (Debian: apt-get install nodejs npm); without them this stops.
NODE_BOT := examples/node_bot
node: $(NODE_BOT)/dist/bot.js
$(NODE_BOT)/dist/bot.js: $(NODE_BOT)/package.json $(NODE_BOT)/package-lock.json $(NODE_BOT)/bot.js \
		$(NODE_BOT)/build.js $(wildcard proto/sixnimmt/v1/*.proto)
	@if ! command -v node >/dev/null || ! command -v npm >/dev/null; then \
		echo "make: ERROR: the tests of bots in other languages run examples/node_bot, which needs node" \
			"and npm (18 or newer); install them ('sudo apt-get install -y nodejs npm'), then make again" >&2; \
		exit 1; \
	fi
	cd $(NODE_BOT) && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy --strict referee/rules games envs
	$(BIN)/mypy --strict referee/driver referee/server/connection.py referee/wire.py
	$(BIN)/mypy --strict workers/play workers/planning workers/league.py
	$(BIN)/lint-imports

## One JSON object per line: {"name", "value", "unit"}.
bench: $(STAMP) bytecode compiled
	$(BIN)/python bench/run.py

bench-quick: $(STAMP) bytecode compiled
	$(BIN)/python bench/run.py --quick

## Chaos on several hosts (network namespaces; needs root and ip netns; a few minutes): a league
## heals from each fault by itself. One bench line per figure: chaos.<scenario>.recovery_s, .ok.
chaos: $(STAMP) bytecode
	$(BIN)/python tests/chaos/run.py

## Rewrite the golden playthrough files, at least one game of every variant the registry lists
## (tests/golden/*.json, Junior's tests/junior/golden/*.json), all from one script; only on
## purpose, and review the diff. tests/golden/test_golden.py checks them.
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
