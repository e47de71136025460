"""``python -m agent_eval_action``."""

import sys

from agent_eval_action.cli import main

sys.exit(main())
