"""The registry HTTP API v2 (distribution spec) through ``requests``: resolve tags to
digests without pulling and without an engine, read manifests for platform digests and
compressed sizes. Side effects: network and the user's Docker credentials/CA files."""

from .client import ManifestNotFoundError, Platform, RegistryAuthError, RegistryClient

__all__ = ["ManifestNotFoundError", "Platform", "RegistryAuthError", "RegistryClient"]
