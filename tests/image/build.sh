#!/usr/bin/env bash
# Build the project's image from its Dockerfile: `make image` (docs/deploy.md, "Build the image").
#
# With a Docker engine: `docker build`. Without one (this machine, CI): buildah, with chroot
# isolation (no OCI runtime needed), on a base that stands in for python:3.11-slim-bookworm,
# made from what the machine has instead of a registry's image:
#   1. debootstrap --variant=minbase bookworm with the libraries CPython links against
#      (a root file system tarball, cached in $CACHE, its packages too);
#   2. the machine's own CPython 3.11 ($PYTHON's base interpreter: `make image` gives the venv's,
#      pyenv's here), without its site-packages and tests, in /usr/local, as the python image has
#      its own build there. Not
#      Debian's python3: bookworm's is 3.11.2, older than what the project needs (tarfile's
#      extraction filters are 3.11.4);
#   3. podman import of the tarball, and a small base on top: that CPython, the machine's CA bundle
#      (the package registry is reached through it here; /etc/pip.conf points pip at it),
#      `python`/`python3` links, ldconfig, and the apt and dpkg settings of Debian's slim images;
#   4. buildah bud of the Dockerfile, PYTHON_IMAGE set to that base.
# Steps 1-3 are redone only when their recipe, the CPython or the CA bundle change (a label on the
# base holds their hash); step 4 reuses buildah's layer cache.
#
# Environment: IMAGE (the tag, default localhost/sixnimmt-arena:dev), PYTHON (whose CPython goes
# in, default python3), SIXNIMMT_IMAGE_CACHE (default /var/cache/sixnimmt-image), DEBIAN_MIRROR,
# SIXNIMMT_IMAGE_ENGINE (docker or buildah: force one).
set -euo pipefail
cd "$(dirname "$0")/../.."

IMAGE=${IMAGE:-localhost/sixnimmt-arena:dev}
CACHE=${SIXNIMMT_IMAGE_CACHE:-/var/cache/sixnimmt-image}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
# What python:3.11-slim-bookworm installs for its CPython (ssl, sqlite3, ctypes, readline, ...).
PACKAGES=ca-certificates,netbase,tzdata,libssl3,libffi8,libsqlite3-0,libbz2-1.0,liblzma5,zlib1g,libncursesw6,libreadline8,libuuid1,libgdbm6,libexpat1,libtirpc3,libcrypt1
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
ROOTFS_IMAGE=localhost/sixnimmt-bookworm-minbase
BASE_IMAGE=localhost/sixnimmt-py311-bookworm
PYTHON=${PYTHON:-python3}

say() { echo "image: $*" >&2; }

engine=${SIXNIMMT_IMAGE_ENGINE:-}
if [ -z "$engine" ]; then
    if command -v docker >/dev/null && docker info >/dev/null 2>&1; then engine=docker; else engine=buildah; fi
fi
if [ "$engine" = docker ]; then
    say "docker build -t $IMAGE ."
    docker build -t "$IMAGE" .
    # make image-test runs images with buildah: hand it the same image.
    if command -v podman >/dev/null; then docker save "$IMAGE" | podman load --quiet >/dev/null; fi
    exit 0
fi

for tool in buildah podman debootstrap; do
    command -v "$tool" >/dev/null || {
        say "$tool is missing: no Docker engine here, so the image is built with buildah on a Debian base" \
            "(Debian: apt-get install buildah podman debootstrap)"
        exit 2
    }
done
[ "$(id -u)" = 0 ] || { say "the Debian base needs root (debootstrap, chroot isolation)"; exit 2; }

read -r py_prefix py_version < <("$PYTHON" -c 'import sys; print(sys.base_prefix, "%d.%d.%d" % sys.version_info[:3])')
case "$py_version" in
    3.11.*) ;;
    *) say "$PYTHON is Python $py_version; the Dockerfile's base is Python 3.11: set PYTHON to a python3.11"; exit 2 ;;
esac
py_binary="$py_prefix/bin/python3.11"
if [ "$py_prefix" = /usr ] || [ ! -x "$py_binary" ] || [ ! -e "$py_prefix/lib/libpython3.11.so.1.0" ]; then
    say "$PYTHON ($py_version in $py_prefix) is not a shared-library CPython of its own prefix (pyenv," \
        "or built from source into /usr/local); Debian bookworm's python3 is too old for the project"
    exit 2
fi

# The base's recipe: anything here changing makes a new base.
rootfs_recipe="v2 $SUITE minbase $PACKAGES $MIRROR"
fingerprint=$(sha256sum "$py_binary" "$py_prefix/lib/libpython3.11.so.1.0" "$CA_BUNDLE" | cut -c1-64 | tr '\n' ' ')
key=$(printf '%s' "$rootfs_recipe base-v3 $py_version $fingerprint" | sha256sum | cut -c1-16)

if [ "$(podman image inspect --format '{{index .Labels "sixnimmt.base-key"}}' "$BASE_IMAGE" 2>/dev/null)" = "$key" ]; then
    say "base $BASE_IMAGE is current (Python $py_version, key $key)"
else
    mkdir -p "$CACHE/debs"
    tarball="$CACHE/rootfs-$SUITE-$(printf '%s' "$rootfs_recipe" | sha256sum | cut -c1-12).tar"
    work=$(mktemp -d "$CACHE/work.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    if [ ! -s "$tarball" ]; then
        say "debootstrap $SUITE (about a minute; packages cached in $CACHE/debs)"
        debootstrap --variant=minbase --include="$PACKAGES" --cache-dir="$CACHE/debs" \
            "$SUITE" "$work/root" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
            || { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
        # As the python image: no package lists or archives (a RUN apt-get update fetches them).
        rm -rf "$work"/root/var/lib/apt/lists/* "$work"/root/var/cache/apt/*.bin \
            "$work"/root/var/cache/apt/archives/*.deb
        tar --numeric-owner -C "$work/root" -cf "$tarball.part" .
        mv "$tarball.part" "$tarball"
        rm -rf "$work/root"
    fi
    say "podman import $tarball"
    podman import --quiet "$tarball" "$ROOTFS_IMAGE" >/dev/null

    say "CPython $py_version from $py_prefix"
    python_tree="$work/context/python"
    mkdir -p "$python_tree/bin" "$python_tree/lib/python3.11/site-packages"
    cp -a "$py_binary" "$python_tree/bin/"
    cp -a "$py_prefix"/lib/libpython3* "$python_tree/lib/"
    cp -a "$py_prefix/include" "$python_tree/"
    tar -C "$py_prefix/lib/python3.11" -c --exclude=./site-packages --exclude=./test \
        --exclude='./config-3.11-*' --exclude=./idlelib --exclude=./tkinter --exclude=./turtledemo . \
        | tar -C "$python_tree/lib/python3.11" -x
    cp "$CA_BUNDLE" "$work/context/ca-certificates.crt"
    # pip verifies with its own certifi bundle unless told: point it at the machine's CA bundle.
    printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$work/context/pip.conf"
    # What Debian's own slim images configure (debuerreotype): apt keeps no caches or archives, and
    # dpkg installs no documentation, manuals or translations, so a RUN apt-get install in the
    # Dockerfile adds what it adds on python:3.11-slim-bookworm.
    mkdir -p "$work/context/apt.conf.d" "$work/context/dpkg.cfg.d"
    cat >"$work/context/apt.conf.d/docker-clean" <<'APT'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
    echo 'Acquire::Languages "none";' >"$work/context/apt.conf.d/docker-no-languages"
    echo 'Acquire::GzipIndexes "true";' >"$work/context/apt.conf.d/docker-gzip-indexes"
    echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$work/context/apt.conf.d/docker-autoremove-suggests"
    printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
        'path-exclude /usr/share/man/*' 'path-exclude /usr/share/groff/*' 'path-exclude /usr/share/info/*' \
        'path-exclude /usr/share/lintian/*' 'path-exclude /usr/share/linda/*' 'path-exclude /usr/share/locale/*' \
        >"$work/context/dpkg.cfg.d/docker"
    {
        echo "FROM $ROOTFS_IMAGE"
        echo "COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt"
        echo "COPY pip.conf /etc/pip.conf"
        echo "COPY apt.conf.d/ /etc/apt/apt.conf.d/"
        echo "COPY dpkg.cfg.d/ /etc/dpkg/dpkg.cfg.d/"
        echo "COPY python/ /usr/local/"
        echo "RUN ldconfig && ln -s python3.11 /usr/local/bin/python3 && ln -s python3 /usr/local/bin/python \\"
        echo "    && python -c 'import ssl, sqlite3, ctypes, bz2, lzma, zlib, readline, uuid, pyexpat, venv, ensurepip, tarfile; tarfile.data_filter'"
        echo "ENV LANG=C.UTF-8"
        echo "LABEL sixnimmt.base-key=\"$key\" sixnimmt.python=\"$py_version\""
        echo 'CMD ["python3"]'
    } >"$work/context/Containerfile"
    buildah bud --quiet --isolation chroot --network host -t "$BASE_IMAGE" "$work/context" >/dev/null
    rm -rf "$work"
    trap - EXIT
    say "base $BASE_IMAGE built (Python $py_version, key $key)"
fi

say "buildah bud -t $IMAGE . (PYTHON_IMAGE=$BASE_IMAGE)"
started=$(date +%s)
buildah bud --isolation chroot --network host --layers \
    --build-arg PYTHON_IMAGE="$BASE_IMAGE" -t "$IMAGE" .
say "$IMAGE built in $(($(date +%s) - started)) s"
# Layers older than a day that no tag holds (earlier builds): the cache keeps the recent ones.
podman image prune --force --filter until=24h >/dev/null
