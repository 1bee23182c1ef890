"""Workflows: each owns its database session's lifecycle (SQLAlchemy's guidance: the
session lives outside the functions that read and write data) and returns plain data
for a command to print."""
