"""Notifications of diff and qualify outcomes: a Slack-compatible webhook and GitHub's
Checks API, over HTTP with ``requests`` (the one side effect of this package lives in
notify/send.py)."""
