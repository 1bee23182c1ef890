"""Workflows that own the database session: commands call one of them and print."""
