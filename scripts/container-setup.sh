#!/usr/bin/env bash
# What building the action's image needs here: podman (installed if missing), a containers.conf
# this machine's cgroups and ulimits accept, and the local base image. No registry is reachable
# here, so the base image is made with mmdebstrap from Debian's packages and imported locally.
# Used by scripts/container-test.sh and `make bench-action`; podman finds the conf through
# CONTAINERS_CONF=$AGENT_EVAL_CONTAINER_STATE/containers.conf (bench/action_start.py sets it).
set -euo pipefail
STATE=${AGENT_EVAL_CONTAINER_STATE:-/tmp/agent-eval-container}
BASE=localhost/agent-eval-base:bookworm
mkdir -p "$STATE"

# --registry: also Debian's docker-registry, the loopback registry bench/action_start.py pulls from.
tools=(podman runc mmdebstrap)
packages=(podman runc mmdebstrap uidmap fuse-overlayfs)
if [ "${1:-}" = "--registry" ]; then tools+=(docker-registry); packages+=(docker-registry); fi
need=()
for tool in "${tools[@]}"; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi

# crun refuses this machine's hybrid cgroup layout, and the default ulimits exceed the hard ones.
cat > "$STATE/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$STATE/containers.conf"

if ! podman image exists "$BASE"; then
  hooks=()
  # Hosts behind a TLS-inspecting proxy carry extra CA certificates; the image must trust them too.
  if compgen -G "/usr/local/share/ca-certificates/*" >/dev/null; then
    hooks+=(--customize-hook='copy-in /usr/local/share/ca-certificates /usr/local/share' --customize-hook='chroot "$1" update-ca-certificates')
  fi
  mmdebstrap --quiet --variant=apt --include=python3,python3-pip,python3-venv,ca-certificates,git "${hooks[@]}" bookworm "$STATE/base.tar"
  podman import "$STATE/base.tar" "$BASE" >/dev/null
  rm -f "$STATE/base.tar"
fi
