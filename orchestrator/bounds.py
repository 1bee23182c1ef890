"""Bounds every layer shares, in a module that imports nothing (the CLI's flag checks read
them at start-up without loading the pydantic models of ``spec.py``)."""

#: the longest deadline or timeout a flag or a job spec may give: a week (a run always has a deadline)
MAX_SECONDS = 7 * 24 * 3600.0

#: matrix versions and baseline names: they appear in file names, URLs and report headers
VERSION_PATTERN = r"^[A-Za-z0-9._-]{1,64}$"
