#!/usr/bin/env bash
# Builds the action's image from the Dockerfile with podman and runs the entrypoint as the GitHub
# runner does, against a loopback GitHub API (tests/container). The tools, the containers.conf
# and the local base image come from scripts/container-setup.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export AGENT_EVAL_CONTAINER_STATE=${AGENT_EVAL_CONTAINER_STATE:-/tmp/agent-eval-container}
BASE=localhost/agent-eval-base:bookworm
IMAGE=localhost/agent-eval-action:test
bash "$ROOT/scripts/container-setup.sh"
export CONTAINERS_CONF="$AGENT_EVAL_CONTAINER_STATE/containers.conf"

podman build --quiet --pull=never --network host --build-arg "BASE_IMAGE=$BASE" -t "$IMAGE" "$ROOT"
cd "$ROOT"
AGENT_EVAL_IMAGE="$IMAGE" .venv/bin/python -m pytest -q -m container tests/container
