"""GitHub: the REST client and publishing the sticky comment, summary and annotations."""
