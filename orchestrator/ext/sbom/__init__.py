"""An image inventory as a CycloneDX SBOM (``render``), validated against the CycloneDX
schema; ``inventory audit|show --format cyclonedx``. Extra: ``valorch[sbom]``."""
