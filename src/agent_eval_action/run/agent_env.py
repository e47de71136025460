"""The environment the agent's worker gets: ours minus our secrets.

The agent is code we did not write and must never read the GitHub token, the Actions runtime
tokens, the judge's key or the agent-URL auth token. Its own credentials (``GOOGLE_API_KEY``,
``GOOGLE_APPLICATION_CREDENTIALS``, ``GOOGLE_GENAI_USE_VERTEXAI``, ``GOOGLE_CLOUD_*``, ...) pass.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

WITHHELD = ("GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "AGENT_EVAL_JUDGE_API_KEY", "AGENT_EVAL_AUTH_TOKEN")
WITHHELD_PREFIXES = ("INPUT_", "ACTIONS_ID_TOKEN_REQUEST_")
# The agent's own git commands see no replace refs or grafts either. What we read of the base
# was read before it started; this keeps a `git replace` it runs from mattering to anything else.
GIT_SETTINGS = {"GIT_NO_REPLACE_OBJECTS": "1", "GIT_GRAFT_FILE": os.devnull}


def agent_environment(
    env: Mapping[str, str], *, also_withhold: Iterable[str] = (), pass_through: Iterable[str] = (), remove: Iterable[str] = ()
) -> dict[str, str]:
    """``env`` without our secrets (``also_withhold``: names the config gives to secrets of ours,
    e.g. ``agent_auth_env``). ``pass_through`` names variables the user wants the agent to have
    anyway; ``remove`` withholds more (the config's ``agent-env`` table)."""
    keep = set(pass_through)
    drop = {*WITHHELD, *also_withhold, *remove}
    kept = {name: value for name, value in env.items() if name in keep or (name not in drop and not name.startswith(WITHHELD_PREFIXES))}
    return {**kept, **GIT_SETTINGS}
