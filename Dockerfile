# Plant Store's container image: the npm package, packed here and installed the way
# `npm install -g` installs it, on the official Node 24 (LTS) image.
#
#   docker build -t plantstore .
#   docker run -d -p 8080:8080 -v plantstore-data:/data plantstore
#
# docs/deploy.md covers volumes, the first token, upgrades and backups.

# Any Debian-based image with a Node release package.json's engines accepts and npm in /usr/local
# works as the base; the default is a line that still gets security fixes.
ARG BASE=node:24-bookworm-slim

# 1. Compile the TypeScript and pack the package as it would be published. The lock file travels in
#    the package as npm-shrinkwrap.json, so the install below takes exactly the locked versions.
FROM ${BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md ./
COPY bin bin
COPY scripts scripts
COPY src src
RUN npm shrinkwrap && npm pack --pack-destination /tmp && mv /tmp/plantstore-*.tgz /tmp/plantstore.tgz

# 2. Install the package on a clean system. better-sqlite3 compiles SQLite from source: no install
#    step downloads a prebuilt binary.
FROM ${BASE} AS install
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY --from=build /tmp/plantstore.tgz /tmp/plantstore.tgz
ENV npm_config_build_from_source=true
RUN npm install --global --prefix /opt/plantstore --omit=dev --no-audit --no-fund /tmp/plantstore.tgz

# 3. The image: Node, the installed package and nothing used only to build it.
FROM ${BASE}
RUN groupadd --system --gid 10001 plantstore \
  && useradd --system --uid 10001 --gid plantstore --home-dir /data --no-create-home \
    --shell /usr/sbin/nologin plantstore \
  && mkdir /data \
  && chown plantstore:plantstore /data
COPY --from=install /opt/plantstore /opt/plantstore
# Inside a container the service listens on every address: the port is what is published.
ENV PATH=/opt/plantstore/bin:$PATH \
  HOST=0.0.0.0 \
  PORT=8080 \
  DATABASE_URL=sqlite:/data/plantstore.db
VOLUME ["/data"]
WORKDIR /data
USER plantstore:plantstore
EXPOSE 8080
# /readyz is 503 while the database is unreachable or the service drains; `plantstore health` asks
# it at HOST and PORT, as serve reads them.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["plantstore", "health"]
# serve handles SIGTERM as PID 1 (drains, closes the store, exits 0): no init process is needed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["plantstore"]
CMD ["serve"]
