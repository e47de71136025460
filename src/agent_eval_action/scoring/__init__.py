"""Scoring: the scorer, aggregate statistics, reuse of unchanged results, shards."""
