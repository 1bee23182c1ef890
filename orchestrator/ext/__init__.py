"""The satellites (orchestrator/satellites.py is their registry; docs/architecture.md,
"Core and satellites"): one package each, its third-party packages an extra of its own.
They import the core's services and helpers, never each other; the core never imports them."""
