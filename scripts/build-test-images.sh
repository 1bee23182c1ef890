#!/usr/bin/env bash
# Build valorch's local test images with no registry:
#   valorch/base:bookworm       debootstrap'd Debian 12 root file system (python3)
#   valorch/base:bullseye       debootstrap'd Debian 11 root file system (python3 = 3.9)
#   valorch/base:sid            debootstrap'd Debian unstable (the release that packages ROCm)
#   valorch/test:debian-torch   bookworm + Debian's python3-torch (PyTorch 1.13)
#   valorch/test:pip-torch      bookworm + a PyTorch 2.x CPU wheel installed by pip
#   valorch/test:pip-torch-cuda bookworm + the index's default PyTorch 2.x wheel (a CUDA build)
#                               and NVIDIA's library wheels (about 3 GB; no GPU needed)
#   valorch/test:fake-rocm      bookworm + a fake ROCm layout for the inventory audit
#   valorch/test:rocm-userspace sid + Debian's ROCm packages (HIP, rocBLAS, hipBLASLt, MIOpen,
#                               rocminfo, rocm-smi, amd-smi; about 530 MB fetched)
#   valorch/test:rocm-rccl      sid + Debian's RCCL (librccl1) with its HIP 5 dependencies from
#                               trixie (HIP 6's HSA runtime breaks HIP 5; about 180 MB fetched)
#   valorch/test:broken-torchvision  debian-torch + a torchvision whose library has an undefined symbol
#   valorch/test:culprit-good / culprit-bad  bookworm + vfmath 1.0 / a broken 1.1 (bisect's culprit)
# Each image carries a label with the hash of its inputs; an image whose
# label matches is not rebuilt.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${VALORCH_CACHE:-$here/.cache}
torch_version=${VALORCH_TEST_TORCH:-2.13.0}
# The CUDA test image's torch: a +cu124 build with cuDNN 9, NCCL 2.21 and the CUDA 12.4 wheels.
cuda_torch_version=${VALORCH_TEST_CUDA_TORCH:-2.6.0}
python=${PYTHON:-python3}
mkdir -p "$cache"

need() { command -v "$1" >/dev/null 2>&1; }
if ! need debootstrap; then
  if [ "$(id -u)" != 0 ]; then echo "build-test-images: debootstrap missing; install it as root" >&2; exit 3; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
"$here/scripts/ensure-engine.sh"

label=org.valorch.inputs
current_hash() { docker image inspect -f "{{ index .Config.Labels \"$label\" }}" "$1" 2>/dev/null || true; }

base_image() { # suite name python-include
  local suite=$1 name=valorch/base:$1
  local want
  want=$(printf 'debootstrap minbase %s python3 ca-certificates v1' "$suite" | sha256sum | cut -c1-16)
  if [ "$(current_hash "$name")" = "$want" ]; then echo "== $name up to date"; return; fi
  echo "== building $name (debootstrap, about a minute)"
  local dir="$cache/rootfs-$suite"
  rm -rf "$dir"
  debootstrap --variant=minbase --include=python3,ca-certificates "$suite" "$dir" >"$cache/debootstrap-$suite.log" 2>&1 \
    || { tail -n 30 "$cache/debootstrap-$suite.log" >&2; exit 3; }
  rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*
  tar -C "$dir" -c . | docker import --change "LABEL $label=$want" --change 'CMD ["/bin/bash"]' - "$name" >/dev/null
  rm -rf "$dir"
}

# An image is rebuilt only when the hash of its inputs (its label) changed.
up_to_date() { # name want
  [ "$(current_hash "$1")" = "$2" ] || return 1
  echo "== $1 up to date"
}

build_image() { # name dockerfile context want [build-args...]
  local name=$1 dockerfile=$2 context=$3 want=$4; shift 4
  echo "== building $name"
  docker build --network host -q -f "$dockerfile" --label "$label=$want" "$@" -t "$name" "$context" >/dev/null
}

derived_image() { # name dockerfile context [build-args...]
  local name=$1 dockerfile=$2 context=$3; shift 3
  local want
  want=$( { cat "$dockerfile"; echo "$*"; docker image inspect -f '{{.Id}}' valorch/base:bookworm; \
            [ -d "$context" ] && (cd "$context" && find . -type f -printf '%p %s\n' | sort); } | sha256sum | cut -c1-16)
  up_to_date "$name" "$want" || build_image "$name" "$dockerfile" "$context" "$want" "$@"
}

base_image bookworm
base_image bullseye
base_image sid

empty="$cache/empty-context"; mkdir -p "$empty"
derived_image valorch/test:debian-torch "$here/images/docker/Dockerfile.debian-torch" "$empty"

# The two pip images install torch from a wheelhouse the host's pip fills (a local CPU wheel
# when the machine has one; the CUDA build and NVIDIA's wheels are about 3 GB). An image is
# keyed by what it asks for (Dockerfile, torch version, base), not by the wheels' listing, so
# an engine that has it up to date is never made to fetch them again (a fresh clone on a
# machine that built it once fetches nothing). A wheelhouse counts only once complete: pip
# downloads into a scratch directory, retried on a transport fault, renamed when it ends.
fetch_wheels() { # dir description pip-download-args...
  local dir=$1 what=$2; shift 2
  # complete, and for these requirements (another torch version is fetched anew)
  [ "$(cat "$dir/.complete" 2>/dev/null)" = "$*" ] && return
  local scratch="$dir.partial" try
  for try in 1 2 3; do
    echo "== fetching $what into $dir (try $try of 3)"
    rm -rf "$scratch"; mkdir -p "$scratch"
    if "$python" -m pip download -q --only-binary=:all: --python-version 3.11 \
         --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
         --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any \
         -d "$scratch" "$@" 2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2); then
      echo "$*" >"$scratch/.complete"; rm -rf "$dir"; mv "$scratch" "$dir"; return
    fi
    [ "$try" = 3 ] || sleep $((try * 10))
  done
  rm -rf "$scratch"
  echo "build-test-images: could not fetch $what into $dir (three tries; pip's error is above)." >&2
  echo "  A full disk (df -h $cache: the CUDA wheels need about 6 GB while they are fetched and" >&2
  echo "  built), a version the index lacks or an unreachable index; mend that, then: make test-images" >&2
  exit 3
}

wheel_image() { # name dockerfile context-dir description torch-version requirements...
  local name=$1 dockerfile=$2 context=$3 what=$4 version=$5; shift 5
  local want
  want=$( { cat "$dockerfile"; echo "wheels v1 $version $*"; docker image inspect -f '{{.Id}}' valorch/base:bookworm; } \
          | sha256sum | cut -c1-16)
  up_to_date "$name" "$want" && return
  fetch_wheels "$context/wheelhouse" "$what" "$@"
  build_image "$name" "$dockerfile" "$context" "$want" --build-arg TORCH_VERSION="$version"
}

wheel_image valorch/test:pip-torch "$here/images/docker/Dockerfile.pip-torch" "$cache/pip-context" \
  "torch $torch_version (CPU wheel) and numpy" "$torch_version" "torch==$torch_version" numpy
# The CUDA build: the index's default torch wheel and the NVIDIA wheels it requires.
wheel_image valorch/test:pip-torch-cuda "$here/images/docker/Dockerfile.pip-torch-cuda" \
  "$cache/pip-cuda-context" "torch $cuda_torch_version (CUDA build) and NVIDIA's wheels (about 3 GB)" \
  "$cuda_torch_version" "torch==$cuda_torch_version"
# Fake ROCm layout (headers, /opt/rocm/.info/version, dpkg entries, ucx/ompi/ofed
# tools) on the bookworm base: proves the inventory's ROCm paths end to end.
derived_image valorch/test:fake-rocm "$here/images/docker/Dockerfile.fake-rocm" "$here/images/docker"
# Debian's real ROCm user space on its own base (unstable: the release that packages it). The
# base's id is a build arg, so a rebuilt base rebuilds it; otherwise it is built once.
derived_image valorch/test:rocm-userspace "$here/images/docker/Dockerfile.rocm-userspace" "$empty" \
  --build-arg BASE_ID="$(docker image inspect -f '{{.Id}}' valorch/base:sid)"
# Debian's real RCCL, which needs HIP 5: the same base with trixie beside it, pinned low.
derived_image valorch/test:rocm-rccl "$here/images/docker/Dockerfile.rocm-rccl" "$empty" \
  --build-arg BASE_ID="$(docker image inspect -f '{{.Id}}' valorch/base:sid)"
# An installed-but-broken torchvision (its native library comes from the 2.13 wheel,
# loaded into Debian's torch 1.13: "undefined symbol"): the probe must say fail, not
# unsupported. The build args carry the two images' ids, so a rebuilt donor or base
# rebuilds this one.
derived_image valorch/test:broken-torchvision "$here/images/docker/Dockerfile.broken-torchvision" \
  "$here/images/docker/broken-torchvision" \
  --build-arg DONOR_ID="$(docker image inspect -f '{{.Id}}' valorch/test:pip-torch)" \
  --build-arg BASE_ID="$(docker image inspect -f '{{.Id}}' valorch/test:debian-torch)"
# A pair that differs in one component (vfmath 1.0 vs a broken 1.1), for bisect's culprit:
# a few kilobytes on the bookworm base, seconds to build.
derived_image valorch/test:culprit-good "$here/images/docker/Dockerfile.culprit" "$empty" \
  --build-arg VFMATH_VERSION=1.0 --build-arg VFMATH_BROKEN=0
derived_image valorch/test:culprit-bad "$here/images/docker/Dockerfile.culprit" "$empty" \
  --build-arg VFMATH_VERSION=1.1 --build-arg VFMATH_BROKEN=1
docker image ls 'valorch/*'

