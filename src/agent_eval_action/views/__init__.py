"""One page built once per run, and its views: terminal, comment, summary, report.html, JUnit."""
