#!/bin/sh
# Entrypoint of the ecsd image.
#
#   (no arguments)          ecsd with its settings from the environment (ECSD_PORT, ECSD_TOKEN, ...)
#   --flag ...              ecsd with these flags (they win over the environment)
#   ecsd --flag ...         the same
#   any other command ...   runs that command, e.g. `ecsctl -f /scripts/demo.ecs` or `sh`
#
# For ecsd only, two defaults differ from a plain `ecsd`: it listens on every interface of the
# container (ECSD_HOST=0.0.0.0, so a published port reaches it) and saves worlds in /data
# (ECSD_DATA_DIR=/data, set in the image). ECSD_DATA_DIR= (empty) keeps everything in memory.
set -eu

if [ "$#" -gt 0 ] && [ "$1" = ecsd ]; then
    shift
elif [ "$#" -gt 0 ] && [ "${1#-}" = "$1" ]; then
    exec "$@"
fi

export ECSD_HOST="${ECSD_HOST:-0.0.0.0}"
# ecsd replaces this shell (PID 1 stays ecsd), so docker stop's SIGTERM reaches it directly.
exec ecsd "$@"
