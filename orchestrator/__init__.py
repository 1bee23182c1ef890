"""valorch: containerized multi-backend validation orchestrator."""

__version__ = "0.3.0"
