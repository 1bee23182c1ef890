"""CLI commands, one module per noun; ``orchestrator.cli`` assembles them."""
