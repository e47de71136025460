"""The agent's side of a run: the environment its workers get (variables, the venv the install
command makes, its fingerprint) and, with ``--in-process``, the agent loaded and run here.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); nothing here is
part of it, and names may change between releases.
"""

__all__: list[str] = []
