"""The repository: git, baselines, history, results files, dataset discovery, globs, agent paths."""
