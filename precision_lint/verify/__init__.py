"""`precision-lint verify`: replay each flagged accumulation before and after its fix,
for real, in a child process, and compare both with the exact count.

Nothing here is imported on the lint path; only `child.py` imports torch, and only in
the child process.
"""
