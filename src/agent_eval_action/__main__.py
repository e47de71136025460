"""``python -m agent_eval_action``: the process the command line starts (``cli.main.entry``)."""

from agent_eval_action.cli.main import entry

entry()
