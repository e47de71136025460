"""The API the adapters call: evaluate, compare, check, init, and the steps of a run."""
