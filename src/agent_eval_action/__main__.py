"""``python -m agent_eval_action``."""

import os
import sys

from agent_eval_action.cli.main import main

code = main()
from agent_eval_action.core import interrupt  # noqa: E402 - after the command: --help stays fast

if interrupt.requested() is not None:
    # Interrupted: everything is written; threads still waiting on the agent (an --agent-url
    # request) must not hold the exit until their own timeouts.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
sys.exit(code)
