# syntax=docker/dockerfile:1
# ecsd in a container: a build stage with the whole tool chain, and a small runtime stage that
# carries only ecsd, ecsctl and the shared libraries they load. See "## Docker" in README.md.
#
#   docker build -t ecsd .
#   docker run -d --name ecsd -p 127.0.0.1:7777:7777 -p 127.0.0.1:7778:7778 -v ecsd-data:/data ecsd

# ---- build: the project's own dependency script, then a Release build of the two programs ----
FROM debian:bookworm-slim AS build
WORKDIR /src
# The script alone first, so the package layer stays cached while the sources change.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN scripts/install-deps.sh --build-only && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release \
          -DECSD_BUILD_TESTS=OFF -DECSD_BUILD_BENCHMARKS=OFF \
 && cmake --build build/release --target ecsd ecsctl \
 && strip build/release/bin/ecsd build/release/bin/ecsctl

# ---- runtime: no compiler, no headers; runs as the unprivileged user ecsd (uid/gid 10001) ----
FROM debian:bookworm-slim
# ldd: ecsd loads libspdlog.so.1.10 + libfmt.so.9 + libhttp_parser.so.2.9 + libzstd.so.1 + libsimdjson.so.14
# + libjemalloc.so.2 + liblua5.4.so.0 + libcrypto.so.3,
# ecsctl loads libsimdjson.so.14 + libreadline.so.8 (+ libtinfo6);
# libstdc++6, libgcc-s1 and libc6 are already in the base image.
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        libspdlog1.1 libfmt9 libhttp-parser2.9 libzstd1 libsimdjson14 libjemalloc2 liblua5.4-0 libssl3 libreadline8 \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
 && groupadd --system --gid 10001 ecsd \
 && useradd --system --no-log-init --uid 10001 --gid ecsd --create-home --home-dir /home/ecsd \
            --shell /usr/sbin/nologin ecsd \
 && mkdir -p /data && chown ecsd:ecsd /data
COPY --from=build /src/build/release/bin/ecsd /src/build/release/bin/ecsctl /usr/local/bin/
COPY docker/entrypoint.sh /usr/local/bin/docker-entrypoint
RUN chmod 0755 /usr/local/bin/docker-entrypoint

# Worlds are saved here (snapshots + journals); the entrypoint binds 0.0.0.0 unless ECSD_HOST says otherwise.
ENV ECSD_DATA_DIR=/data
VOLUME /data
WORKDIR /data
# 7777: JSON-RPC over TCP; 7778: the HTTP face (JSON-RPC over HTTP, event streams, the viewer page).
EXPOSE 7777 7778
# Numeric, so orchestrators (runAsNonRoot) can tell it is not root; the name is ecsd.
USER 10001:10001
# ecsd saves every world and exits 0 on SIGTERM (in well under docker stop's 10 s).
STOPSIGNAL SIGTERM
# Port and token come from ECSD_PORT / ECSD_TOKEN, the same variables ecsd reads.
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
    CMD ["ecsctl", "--host", "127.0.0.1", "--timeout", "3", "ping"]
ENTRYPOINT ["docker-entrypoint"]
CMD []
