"""The results store: SQLAlchemy 2.0 models and queries. Sessions are opened at
the edge (the CLI or the scheduler) and passed in; nothing here opens its own."""
