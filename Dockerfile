# The action's image: Python, git, and agent-eval-action installed from the pinned lock.
ARG BASE_IMAGE=python:3.11-slim-bookworm
FROM ${BASE_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/agent-eval/venv \
    PATH=/opt/agent-eval/venv/bin:$PATH \
    PYTHONPATH=/opt/agent-eval/src

# git: baselines are read from the base branch's history.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*

COPY requirements.runtime.lock /opt/agent-eval/requirements.lock
RUN python3 -m venv /opt/agent-eval/venv \
    && pip install --no-deps -r /opt/agent-eval/requirements.lock

# The package runs from its source tree (templates and price table included): nothing to build.
COPY src /opt/agent-eval/src
# Bytecode now: with PYTHONDONTWRITEBYTECODE every start would compile the package again.
RUN python -m compileall -q /opt/agent-eval/src

# No WORKDIR or USER: the runner mounts the workspace and runs as its own user.
ENTRYPOINT ["python", "-m", "agent_eval_action", "action"]
