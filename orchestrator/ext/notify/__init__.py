"""The reports of ``diff`` and ``qualify`` posted to chat and CI (``--notify``): targets,
messages, sending, and the report-to-message service. Extra: ``valorch[notify]`` (nothing
beyond the core's packages)."""
