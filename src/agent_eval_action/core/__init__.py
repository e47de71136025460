"""Models, errors, paths inside the repository, redaction, logs, files, text, workflow commands."""
