"""in-toto attestations of a qualification (``valorch attest``, ``valorch verify``): the
statements, DSSE signing, OCI artifacts on a registry, verification. Extra: ``valorch[attest]``."""
