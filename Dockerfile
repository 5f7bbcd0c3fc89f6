# tvimport in a container: build on the official Swift image, run on Debian slim.
#
#   docker build -t tvimport .
#   docker run -d --name tvimport -v tvimport-data:/data -v "$PWD/config:/config:ro" \
#     -v /var/www/tv:/feeds -e TZ=Europe/London -e TVIMPORT_BASE_URL=https://tv.example.org tvimport
#   docker run --rm -v tvimport-data:/data tvimport tvimport status --db /data/tvimport.sqlite
#   docker run -d -p 8080:8080 -v tvimport-data:/data -v /var/www/tv:/feeds:ro \
#     -e TVIMPORT_SERVE_TOKEN=... tvimport tvimport serve --host 0.0.0.0   # README "Serving"
#
# /config/config.json is the config (its database, output and cache keys are overridden by the
# TVIMPORT_* variables below). The job runs as uid 10001: a bind-mounted /feeds (or /data) must be
# writable by it (`chown 10001 /var/www/tv`); named volumes are set up by the image.
#
# The container runs tonight's job once at start and then every night at 03:00 plus up to 45
# minutes (Schedules/container-nightly); `docker ps` shows its health from the last run.

# ---- build stage: the same commands as scripts/setup (minus the sample run) -------------------
FROM swift:6.3-bookworm AS build
WORKDIR /src
# install-deps first, alone: its layer (apt) survives changes to the sources.
COPY scripts/install-deps scripts/install-deps
RUN scripts/install-deps --build
COPY . .
RUN swift build -c release --static-swift-stdlib
# The binaries (`tvimport serve` execs tvimport-serve from its own directory); the resources (the bundled sample guide) go to /usr/local/share/tvimport, where it
# looks for them (../share/tvimport from the binary); the man page and completions beside them.
# GRDB_GRDB.resources holds only Apple's privacy manifest: not needed.
RUN mkdir -p /staging/bin /staging/share/tvimport /staging/share/man/man1 /staging/share/bash-completion/completions \
 && cp .build/release/tvimport .build/release/tvimport-serve /staging/bin/ \
 && cp Sources/Job/Resources/* /staging/share/tvimport/ \
 && cp docs/tvimport.1 /staging/share/man/man1/ \
 && cp docs/completions/tvimport.bash /staging/share/bash-completion/completions/tvimport

# ---- runtime stage ---------------------------------------------------------------------------
FROM debian:bookworm-slim
# With a static Swift stdlib the binary needs only these C libraries (PLATFORM-NOTES, Tooling;
# jemalloc: README.md#dependencies),
# plus tini as PID 1 for the schedule loop (reaps children, forwards docker stop's SIGTERM).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcurl4 libxml2 libsqlite3-0 libjemalloc2 ca-certificates tzdata tini \
 && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 tvimport \
 && useradd --system --uid 10001 --gid tvimport --home-dir /data --no-create-home \
      --shell /usr/sbin/nologin tvimport \
 && mkdir -p /data/cache /config /feeds \
 && chown tvimport:tvimport /data /data/cache /feeds

COPY --from=build /staging/bin/ /usr/local/bin/
COPY --from=build /staging/share/ /usr/local/share/
COPY Schedules/container-nightly /usr/local/bin/tvimport-nightly
COPY Schedules/healthcheck /usr/local/bin/tvimport-healthcheck
COPY Schedules/config.example.json /usr/local/share/tvimport/config.example.json

# The config file's database, output and cache keys are overridden for the container's volumes.
ENV TVIMPORT_DB=/data/tvimport.sqlite \
    TVIMPORT_OUTPUT=/feeds \
    TVIMPORT_CACHE=/data/cache \
    TVIMPORT_CONFIG=/config/config.json
# /data: database and fetch cache; /config: config.json (read-only is fine); /feeds: the .ics files.
VOLUME ["/data", "/config", "/feeds"]

USER tvimport
WORKDIR /data
# `tvimport serve` (not the default command) listens here when given --host 0.0.0.0.
EXPOSE 8080

# Healthy when the last recorded run exited 0 and finished less than 26 h ago. Three failures in
# a row (45 min) before "unhealthy": a check may meet the database locked by a run in progress.
HEALTHCHECK --interval=15m --timeout=30s --start-period=30m --retries=3 \
  CMD ["/usr/local/bin/tvimport-healthcheck"]

# `docker run IMAGE` runs the schedule; `docker run IMAGE tvimport status --db /data/tvimport.sqlite`
# (or any other command) runs once.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["/usr/local/bin/tvimport-nightly"]
