"""The environment of a probe (and its workloads) run by the local interpreter, and the
scrubbing of valorch's secrets from what it prints (pure, apart from reading os.environ).

A workload on ``--image host`` runs as the invoking user with no container around it. It
gets an allow-list of valorch's environment: what a shell, a compiler and the GPU stacks
need (PATH, HOME, locale, the CUDA/ROCm/HIP settings), never a token, a password or a
database URL. A job passes more, name by name, with its suite's ``pass_env``. Whatever the
workload prints is scrubbed of the values of valorch's secret-looking variables (names with
TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL, AUTH) and of the passwords of URLs in its
environment before it is stored (and pushed)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

ALLOWED_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "TMPDIR",
        "LD_LIBRARY_PATH",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NVIDIA_VISIBLE_DEVICES",
        "GPU_DEVICE_ORDINAL",
        # the probe's own settings
        "VALORCH_TINY",
        "VALORCH_NODE",
        "VALORCH_COLLECTIVE_TIMEOUT",
        "VALORCH_BUSBW_REPS",
        "VALORCH_BUSBW_SIZES",
        "VALORCH_IMAGE_DIGEST",
        "VALORCH_IMAGE_ID",
    }
)
#: the locale and the GPU stacks' settings (device selection, install paths, library tuning)
ALLOWED_PREFIXES = (
    "LC_",
    "CUDA_",
    "HIP_",
    "HSA_",
    "ROCR_",
    "ROCM_",
    "NCCL_",
    "RCCL_",
    "MIOPEN_",
    "ROCBLAS_",
    "HIPBLASLT_",
    "PYTORCH_",
    "TORCH_",
)
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE|AUTH|_KEY\b|SESSION|COOKIE",
    re.IGNORECASE,
)
_URL_PASSWORD = re.compile(r"://[^/\s:@]*:([^/\s@]+)@")
#: a value shorter than this is not scrubbed (it would blank out common words and numbers)
MIN_SECRET = 6
SCRUBBED = "***"


def secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def allowed(passed: Iterable[str] = ()) -> dict[str, str]:
    """The part of this process's environment a local workload gets: the allow-list (never
    a secret-looking name), plus the names a job passes explicitly."""
    extra = set(passed)
    return {
        k: v
        for k, v in os.environ.items()
        if k in extra
        or (
            (k in ALLOWED_NAMES or k.startswith(ALLOWED_PREFIXES))
            and not secret_name(k)
            and not _URL_PASSWORD.search(v)
        )
    }


def secret_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values to scrub from a workload's output: those of secret-looking variables and
    the passwords of URLs in any variable, longest first."""
    environ = os.environ if environ is None else environ
    found = {v for k, v in environ.items() if secret_name(k)}
    for value in environ.values():
        found.update(m.group(1) for m in _URL_PASSWORD.finditer(value))
    return tuple(sorted((v for v in found if len(v) >= MIN_SECRET), key=len, reverse=True))


def renderings(value: str) -> tuple[str, ...]:
    """The ways a workload may print a secret to slip past a literal match: as it is, reversed, in
    base64 (standard and URL-safe, with and without padding), in hex (either case), percent-encoded,
    and with its characters spaced out. Masked as a class: any of these is the secret."""
    import base64
    import urllib.parse

    raw = value.encode("utf-8", "surrogateescape")
    forms = {value, value[::-1], raw.hex(), raw.hex().upper(), urllib.parse.quote(value, safe="")}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        coded = encode(raw).decode()
        forms.update({coded, coded.rstrip("=")})
    forms.update({" ".join(value), ",".join(value)})
    return tuple(sorted((f for f in forms if len(f) >= MIN_SECRET), key=len, reverse=True))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value, in any of its ``renderings``, replaced by ``***``."""
    for value in secrets:
        for form in renderings(value):
            if form in text:
                text = text.replace(form, SCRUBBED)
    return text
