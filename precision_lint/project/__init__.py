"""Project-wide analysis: per-module summaries of what functions return and what
the project passes them, resolved across the checked project's own modules."""
