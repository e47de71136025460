"""The agent worker: the part of us that runs under the agent's own Python.

Everything in this package imports only the standard library and what google-adk itself
depends on (google-adk, google-genai, pydantic, opentelemetry), and never another module of
``agent_eval_action``: the worker's files are copied next to each other and run as the top-level
package ``agent_eval_worker`` in the user's environment, where nothing else of ours is installed.
Relative imports only.
"""
