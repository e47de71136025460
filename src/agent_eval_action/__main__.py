"""``python -m agent_eval_action``."""

import atexit
import os
import sys

from agent_eval_action.cli.main import main

code = main()
from agent_eval_action.system import interrupt  # noqa: E402 - after the command: --help stays fast

sys.stdout.flush()
sys.stderr.flush()
if interrupt.requested() is not None:
    # Interrupted: everything is written; threads still waiting on the agent (an --agent-url
    # request) must not hold the exit until their own timeouts.
    os._exit(code)
# Everything is written and flushed: the atexit handlers run (the agent's workers end, logs
# flush), the interpreter's teardown of every module and object does not: it cost 0.2-0.4 s of
# a run the user waits for, and frees nothing the system would not.
atexit._run_exitfuncs()
os._exit(code)
