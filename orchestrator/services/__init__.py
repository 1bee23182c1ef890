"""Workflows that the commands call: they own the session lifecycle and the order of steps."""
