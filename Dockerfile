# The action's image: Python, git, and agent-eval-action with its pinned runtime dependencies.
# Two stages: uv makes the venv in the first, and only the venv and the source reach the second
# (no pip, setuptools or uv in the image, no build leftovers, no dependencies' test suites).
# Both stages start from the same image, so the venv's interpreter links hold in the second.
ARG BASE_IMAGE=python:3.11-slim-bookworm

FROM ${BASE_IMAGE} AS build

ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    UV_NO_CACHE=1 \
    UV_PYTHON_DOWNLOADS=never \
    UV_NATIVE_TLS=1

# The runtime lock pins the core and the vertex extra (Vertex AI's managed metrics), which a
# local install leaves out unless asked for: the action offers every metric.
COPY requirements.runtime.lock /tmp/requirements.lock
# Bytecode now (--compile-bytecode, compileall): with PYTHONDONTWRITEBYTECODE every start of the
# action would compile ADK and the package again. Dependencies' tests/ and test/ folders are
# never imported (pandas' alone is 46 MB).
RUN python3 -m venv /opt/uv \
    && /opt/uv/bin/pip install uv==0.13.9 \
    && /opt/uv/bin/uv venv --python "$(command -v python3)" /opt/agent-eval/venv \
    && /opt/uv/bin/uv pip install --python /opt/agent-eval/venv/bin/python --no-deps --compile-bytecode -r /tmp/requirements.lock \
    && find /opt/agent-eval/venv -depth -type d \( -name tests -o -name test \) -path '*/site-packages/*' -exec rm -rf {} +

# The package runs from its source tree (templates and price table included): nothing to build
# but its bytecode, its templates' (views/compiled.py) and the worker's C audit hook for this
# image's Python (agent_worker/native.py; the compiler stays in this stage).
COPY src /opt/agent-eval/src
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev python3-dev \
    && rm -rf /var/lib/apt/lists/* \
    && PYTHONPATH=/opt/agent-eval/src /opt/agent-eval/venv/bin/python -m agent_eval_action.agent_worker.native \
    && test -n "$(find /opt/agent-eval/src/agent_eval_action/agent_worker -name '_audit_hook*.so')" \
    && /opt/agent-eval/venv/bin/python -m compileall -q /opt/agent-eval/src \
    && PYTHONPATH=/opt/agent-eval/src /opt/agent-eval/venv/bin/python -m agent_eval_action.views

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
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin

COPY --from=build /opt/agent-eval /opt/agent-eval

# No WORKDIR or USER: the runner mounts the workspace and runs as its own user.
ENTRYPOINT ["python", "-m", "agent_eval_action", "action"]
