"""features: one check per row of the seed's "Supported and unsupported
features" tables. A check passes only when the feature really works here; it
is ``unsupported`` when the framework or package lacks it (missing attribute,
missing module, an op that says it is not implemented) and ``skip`` when it
needs a GPU this host does not have. No version facts are encoded: every
outcome comes from trying.

The checks live in features_dtypes, features_cuda, features_backends and
features_ecosystem; this module declares the suite and their shared helpers."""

from __future__ import annotations

import contextlib

from ..registry import checks_of, suite

suite(
    "features",
    "torch",
    "Rows of the seed feature tables (dtypes, torch.cuda, backends, AMP, distributed, "
    "torchvision, torchaudio): tried, not assumed.",
)

feature_check = checks_of("feature", "features")
gpu_feature = checks_of("feature", "features", needs=("gpu",))


@contextlib.contextmanager
def restoring(obj, name):
    """Context manager restoring ``obj.name`` after a check toggled it."""
    value = getattr(obj, name)
    try:
        yield value
    finally:
        setattr(obj, name, value)
