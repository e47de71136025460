"""Every model call of a question: through one door (``calls.py``), the cache (``cache.py``), the
pacing and the retries of a model fault (``pacing.py``), and where an error was raised (``origin.py``)."""
