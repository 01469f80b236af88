# syntax=docker/dockerfile:1
#
# One image for every role of sixnimmt-arena; the role is the command (see docs/deploy.md):
#
#   docker run IMAGE referee serve --listen 0.0.0.0:50051   # the gRPC referee for remote bots
#   docker run IMAGE worker --concurrency 2                 # a Celery worker that plays league blocks
#   docker run IMAGE dashboard --host 0.0.0.0 --port 8000   # the web dashboard and JSON API
#   docker run IMAGE league migrate                         # bring the store to the newest schema
#
# Builder: builds the project's wheel and installs it with the `server` extra into /opt/venv. It
# has a C compiler for the project's extension modules, the Monte Carlo bot's playouts
# (games/classic/sim/_native.c, docs/sim.md) and the referee's compiled hot path (mypyc, built
# beside the venv: /opt/venv/sixnimmt-compiled); every dependency ships binary wheels (grpcio,
# psycopg[binary], ...). Runtime: the same slim Python base, only /opt/venv copied in and
# bubblewrap installed; no compiler, no build tools, no source tree; a fixed non-root user
# (uid/gid 10001).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
COPY pyproject.toml README.md ./
COPY referee ./referee
COPY games ./games
COPY bot_sdk ./bot_sdk
COPY arena ./arena
COPY workers ./workers
COPY dashboard ./dashboard
COPY sixnimmt ./sixnimmt
COPY envs ./envs
COPY api ./api
# The referee's hot path compiled with mypyc (referee/accel.py, docs/architecture.md "The compiled
# hot path") into /opt/venv/sixnimmt-compiled, from the same sources as the wheel's, which the
# referee and the workers check it against at start; mypy goes again once it is built, and the
# build is imported once without it. Then out of the venv what no role runs: pip and setuptools,
# and the packages' own test suites (numpy's and scipy's are about 50 MB).
RUN /opt/venv/bin/pip wheel --no-deps --wheel-dir /wheels . \
    && /opt/venv/bin/pip install "$(ls /wheels/sixnimmt_arena-*.whl)[server,rl]" \
    && /opt/venv/bin/pip install --quiet mypy \
    && /opt/venv/bin/python -m referee.accel build \
    && /opt/venv/bin/pip uninstall --yes --quiet mypy mypy_extensions pathspec librt ast-serialize \
    && cd / && /opt/venv/bin/python -c "from referee import accel; accel.enable('require'); \
        import referee.driver.match; assert accel.active()" && cd /src \
    && /opt/venv/bin/pip uninstall --yes --quiet pip setuptools wheel \
    && find /opt/venv/lib -depth -type d -path '*/site-packages/*' -name tests -exec rm -rf {} + \
    && /opt/venv/bin/sixnimmt settings >/dev/null

FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="sixnimmt-arena" \
      org.opencontainers.image.description="6 nimmt! bots under a gRPC referee: referee, league workers, dashboard"
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# bubblewrap and libseccomp2 (the seccomp filter, loaded through pyseccomp): the bot sandbox
# (workers/sandbox/__init__.py, docs/sandbox.md) refuses to run bots without either; prlimit, setpriv
# (util-linux) and sh come with the base. Nothing else is installed.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap libseccomp2 \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 sixnimmt \
    && useradd --system --uid 10001 --gid 10001 --home-dir /home/sixnimmt --create-home \
       --shell /usr/sbin/nologin sixnimmt
COPY --from=builder /opt/venv /opt/venv
WORKDIR /home/sixnimmt
USER 10001:10001
# referee gRPC, referee metrics, worker metrics, dashboard HTTP (and its /metrics)
EXPOSE 50051 9464 9465 8000
ENTRYPOINT ["sixnimmt"]
CMD ["--help"]
