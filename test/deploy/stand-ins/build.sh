#!/usr/bin/env bash
# Builds the stand-ins for the official images that compose.yaml and the Dockerfile name, from
# Debian's packages and this machine's own Node, for a machine that reaches no container registry:
#   localhost/debian-stand-in:bookworm   debootstrap's minimal Debian 12
#   localhost/node-stand-in:20           for node:20-bookworm-slim (Node and npm in /usr/local)
#   localhost/postgres-stand-in:15       for postgres:16 (honours POSTGRES_USER, _PASSWORD, _DB)
#   localhost/haproxy-stand-in:2.6       for haproxy:2.8 (reads /usr/local/etc/haproxy/haproxy.cfg)
# Usage: build.sh WORKDIR. podman's configuration comes from CONTAINERS_CONF and
# CONTAINERS_STORAGE_CONF (test/deploy/podman.ts writes both). Images already built are kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$1
mkdir -p "$work"

has() { podman image exists "$1"; }

if ! has localhost/debian-stand-in:bookworm; then
  # The mirror apt uses here: the only one this machine may reach.
  mirror=$(grep -rhoE '(URIs:|^deb) +https?://deb\.debian\.org/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | grep -oE 'https?://[^ ]+' | head -1 || true)
  mirror=${mirror:-http://deb.debian.org/debian}
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  rm -f "$work"/rootfs/var/cache/apt/archives/*.deb
  tar --numeric-owner -C "$work/rootfs" -c . \
    | podman import --change 'CMD ["/bin/bash"]' - localhost/debian-stand-in:bookworm >/dev/null
  rm -rf "$work/rootfs"
fi

if ! has localhost/node-stand-in:20; then
  # The machine's Node 20 and npm, where the official image has them. Its CA bundle and headers are
  # for this machine's network and for node-gyp, which would otherwise download the headers: they
  # are set here only, never in the Dockerfile.
  context="$work/node-context"
  rm -rf "$context"
  mkdir -p "$context"
  cp "$(readlink -f "$(command -v node)")" "$context/node"
  cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$context/npm"
  cp -a "$(dirname "$(readlink -f "$(command -v node)")")/../include/node" "$context/include"
  cp /etc/ssl/certs/ca-certificates.crt "$context/ca-certificates.crt"
  podman build -q -f "$here/node/Containerfile" -t localhost/node-stand-in:20 "$context" >/dev/null
  rm -rf "$context"
fi

if ! has localhost/postgres-stand-in:15; then
  podman build -q -t localhost/postgres-stand-in:15 "$here/postgres" >/dev/null
fi

if ! has localhost/haproxy-stand-in:2.6; then
  podman build -q -t localhost/haproxy-stand-in:2.6 "$here/haproxy" >/dev/null
fi
