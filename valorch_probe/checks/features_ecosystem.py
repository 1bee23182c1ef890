"""features: distributed (Gloo, TensorPipe RPC), torchvision, torchaudio and the
ecosystem rows (APEX, Torch-TensorRT) of the seed tables. A package that is not
installed in the image makes its rows unsupported."""

from __future__ import annotations

import copy
import math

from ..context import Fail, Partial, Report, Skip, Unsupported
from . import _dist
from ._common import attempt, gen, process_group, randn
from .features import feature_check, gpu_feature


@feature_check("features.distributed.gloo", "Gloo", library="Gloo", version=2)
def dist_gloo(ctx):
    """Two processes form a gloo group over 127.0.0.1 and all_reduce, broadcast, all_gather and barrier give every
    rank the exact result (world_size 2: data really crosses processes).

    Not proven: more ranks, other hosts or interfaces, or gloo with GPU tensors."""
    torch = ctx.torch
    _dist.available(torch, "gloo")
    answers = _dist.run_ranks("collectives", 2, backend="gloo", device="cpu", n=1024)
    _dist.verify(answers, ["all_reduce", "broadcast", "all_gather"], "gloo collectives")
    ctx.claim(
        library="Gloo",
        source="torch.distributed backend %s, 2 processes over 127.0.0.1" % answers[0]["backend"],
    )
    return Report(
        "gloo all_reduce/broadcast/all_gather/barrier exact on 2 processes",
        {"world_size": answers[0]["world_size"], "processes": 2, "backend": answers[0]["backend"]},
    )


@feature_check("features.distributed.tensorpipe", "TensorPipe", library="TensorPipe", version=3)
def dist_tensorpipe(ctx):
    """Two processes join torch.distributed.rpc with the TensorPipe backend over 127.0.0.1; each calls the other
    with rpc_sync and rpc_async and gets the correct tensors back. An RPC that dies is a fail, also where it
    died for a module torch does not require but init_rpc calls (numpy: its device-map exchange runs
    tensor.numpy()): the image's RPC does not work.

    Not proven: GPU tensors over RPC (device maps), more workers, or other hosts."""
    torch = ctx.torch
    dist = _dist.available(torch, None)
    rpc = attempt("import torch.distributed.rpc", lambda: ctx.load("torch.distributed.rpc"))
    if hasattr(rpc, "is_available") and not rpc.is_available():
        raise Unsupported("torch.distributed.rpc.is_available() is False")
    ctx.require_attr(rpc, "TensorPipeRpcBackendOptions")
    del dist
    try:
        answers = _dist.run_ranks("rpc", 2)
    except Skip as died:  # a rank died for want of an optional module: RPC died in this image
        raise Fail(
            "TensorPipe RPC died: %s" % died.message.replace("not measurable in this image: ", ""),
            died.metrics,
            log=died.log,
        ) from died
    _dist.verify(answers, ["rpc_sync", "rpc_async"], "TensorPipe RPC")
    ctx.claim(
        library="TensorPipe",
        source="torch.distributed.rpc TensorPipe backend, 2 processes over 127.0.0.1",
    )
    return Report(
        "TensorPipe RPC: 2 processes called each other (rpc_sync and rpc_async), results correct",
        {"world_size": 2, "processes": 2},
    )


def _image(torch, c=3, h=64, w=48):
    yy = torch.linspace(0, 1, h).view(h, 1)
    xx = torch.linspace(0, 1, w).view(1, w)
    chans = [
        0.5 + 0.4 * torch.sin(6.0 * xx * (i + 1) + 4.0 * yy) * torch.cos(3.0 * yy * (i + 1))
        for i in range(c)
    ]
    return torch.stack(chans)


@gpu_feature(
    "features.torchvision.transforms_functional", "torchvision.transforms.functional", version=2
)
def tv_transforms(ctx):
    """resize, normalize, crop, hflip and rotate from torchvision.transforms.functional on a GPU tensor match the
    same transforms applied to float64 on the CPU. The row is GPU-accelerated: without a GPU it is skipped after
    torchvision is imported (absent: unsupported; installed but broken: fail).

    Not proven: other transforms, the v2 transforms API, or batched / uint8 inputs."""
    torch = ctx.torch
    tv = ctx.load("torchvision")
    TF = ctx.require_attr(tv, "transforms.functional")  # noqa: N806 (torchvision's own name for it)
    ctx.require_gpu()
    img = _image(torch)

    def pipeline(x):
        x = TF.resize(x, [32, 24])
        x = TF.normalize(x, [0.5, 0.4, 0.3], [0.2, 0.25, 0.3])
        x = TF.crop(x, 2, 3, 24, 18)
        x = TF.hflip(x)
        return TF.rotate(x, 30.0)

    got = attempt(
        "transforms.functional on %s" % ctx.device,
        lambda: ctx.observe(lambda: pipeline(img.to(ctx.device))),
    )
    ref = pipeline(img.double())
    err = ctx.assert_close(got, ref, 1e-4, "transforms pipeline")
    return Report(
        "resize/normalize/crop/hflip/rotate on %s: rel err %.1e" % (ctx.device, err),
        {"rel_error": err, "torchvision": tv.__version__, "device": ctx.device},
    )


@gpu_feature("features.torchvision.ops", "torchvision.ops", version=2)
def tv_ops(ctx):
    """torchvision.ops.nms keeps the same boxes on the GPU as on the CPU, roi_align matches float64 and
    box_convert matches the closed-form conversion. GPU-accelerated row: skipped without a GPU (after the import:
    a torchvision whose native ops cannot load fails).

    Not proven: the other detection ops (deform_conv2d, ps_roi_align...), or backward passes."""
    torch = ctx.torch
    tv = ctx.load("torchvision")
    ops = ctx.require_attr(tv, "ops")
    for name in ("nms", "roi_align", "box_convert"):
        ctx.require_attr(ops, name)
    ctx.require_gpu()
    g = gen(torch, 83)
    xy = torch.rand(300, 2, generator=g) * 100
    wh = torch.rand(300, 2, generator=g) * 30 + 1
    boxes = torch.cat([xy, xy + wh], dim=1)
    scores = torch.rand(300, generator=g)
    keep = attempt(
        "nms on %s" % ctx.device,
        lambda: ctx.observe(lambda: ops.nms(boxes.to(ctx.device), scores.to(ctx.device), 0.4)),
    )
    keep_ref = ops.nms(boxes.double(), scores.double(), 0.4)
    if not torch.equal(keep.cpu(), keep_ref):
        raise Fail(
            "nms kept %d boxes on %s, %d on the CPU in float64"
            % (keep.numel(), ctx.device, keep_ref.numel())
        )
    feat = randn(torch, 2, 4, 32, 32, seed=84)
    rois = torch.tensor(
        [[0, 1.5, 2.0, 20.0, 25.5], [1, 4.0, 4.0, 30.0, 16.0], [0, 0.0, 0.0, 31.0, 31.0]]
    )
    got = attempt(
        "roi_align on %s" % ctx.device,
        lambda: ops.roi_align(feat.to(ctx.device), rois.to(ctx.device), (7, 7), 1.0, 2),
    )
    err = ctx.assert_close(
        got, ops.roi_align(feat.double(), rois.double(), (7, 7), 1.0, 2), 1e-5, "roi_align"
    )
    cw = ops.box_convert(boxes.to(ctx.device), "xyxy", "cxcywh").cpu().double()
    b = boxes.double()
    ref = torch.stack(
        [(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], 1
    )
    err2 = ctx.assert_close(cw, ref, 1e-6, "box_convert")
    return Report(
        "nms kept %d/300 (same as CPU), roi_align %.1e, box_convert %.1e"
        % (keep.numel(), err, err2),
        {"kept": int(keep.numel()), "rel_error": max(err, err2)},
    )


@gpu_feature(
    "features.torchvision.models",
    "torchvision.models with .to('cuda')",
    library="MIOpen/cuDNN",
    version=2,
)
def tv_models(ctx):
    """A randomly initialised torchvision ResNet-18 moved to the GPU gives the float64 CPU logits; the kernels'
    library is recorded. Skipped without a GPU (the row is .to('cuda')).

    Not proven: pretrained weights (no network), training, or other architectures."""
    torch = ctx.torch
    tv = ctx.load("torchvision")
    resnet18 = ctx.require_attr(tv, "models.resnet18")
    ctx.require_gpu()
    torch.manual_seed(0)
    model = resnet18().eval()
    ref_model = copy.deepcopy(model).double()
    x = randn(torch, 2, 3, 64, 64, seed=85)
    with torch.no_grad():
        ref = ref_model(x.double())
        dmodel, dx = model.to(ctx.device), x.to(ctx.device)
        got = ctx.observe(lambda: dmodel(dx))
    tol = 5e-3 if ctx.device != "cpu" else 1e-4
    err = ctx.assert_close(got, ref, tol, "resnet18 logits")
    return Report(
        "resnet18 forward on %s: rel err %.1e" % (ctx.device, err),
        {"rel_error": err, "tolerance": tol},
    )


@gpu_feature("features.torchvision.io", "torchvision.io", library="rocJPEG/nvJPEG", version=3)
def tv_io(ctx):
    """torchvision.io encodes a JPEG on the CPU and decodes it on the GPU (decode_jpeg(device="cuda"), nvJPEG /
    rocJPEG) back to the original image within JPEG loss, the decoded tensor on the GPU. GPU decoding is the row:
    skipped without a GPU.

    Not proven: video decoding (NVDEC / rocDecode), batched decoding, or other image formats."""
    torch = ctx.torch
    tv = ctx.load("torchvision")
    enc = ctx.require_attr(tv, "io.encode_jpeg")
    dec = ctx.require_attr(tv, "io.decode_jpeg")
    ctx.require_gpu()
    img = (_image(torch, 3, 96, 128) * 255).round().to(torch.uint8)
    data = attempt("encode_jpeg", lambda: enc(img, quality=95))
    out = attempt("decode_jpeg on the GPU", lambda: ctx.observe(lambda: dec(data, device="cuda")))
    if isinstance(out, (list, tuple)):
        out = out[0]
    where = str(getattr(out, "device", "?"))
    if not where.startswith("cuda"):  # the row is GPU decoding: a CPU tensor back is not it
        raise Fail(
            'decode_jpeg(device="cuda") returned a tensor on %s, not on the GPU' % where,
            {"decode_device": where},
        )
    if tuple(out.shape) != tuple(img.shape):
        raise Fail("decoded shape %s, encoded %s" % (tuple(out.shape), tuple(img.shape)))
    err = ctx.assert_close(out.float(), img.double(), 0.03, "JPEG round trip")
    return Report(
        "JPEG %d bytes decoded on %s, rel err %.2e" % (data.numel(), where, err),
        {"bytes": int(data.numel()), "rel_error": err, "decode_device": where},
    )


def _wave(torch, sr=16000):
    t = torch.arange(sr, dtype=torch.float64) / sr
    w = 0.5 * torch.sin(2 * math.pi * 440 * t) + 0.3 * torch.sin(2 * math.pi * 1250 * t + 0.3)
    w = w + 0.05 * torch.randn(sr, generator=gen(torch, 86), dtype=torch.float64)
    return w.float().unsqueeze(0)


def _audio_check(name, make, tol=1e-4):
    def fn(ctx):
        torch = ctx.torch
        ta = ctx.load("torchaudio")
        cls = ctx.require_attr(ta, "transforms." + name)
        ctx.require_gpu()
        wave = _wave(torch)
        ref = make(cls).to(torch.float64)(wave.double())
        tr, dw = make(cls).to(ctx.device), wave.to(ctx.device)
        got = attempt("%s on %s" % (name, ctx.device), lambda: ctx.observe(lambda: tr(dw)))
        if tuple(got.shape) != tuple(ref.shape):
            raise Fail(
                "%s output shape %s, float64 reference %s"
                % (name, tuple(got.shape), tuple(ref.shape))
            )
        err = ctx.assert_close(got, ref, tol, name)
        return Report(
            "%s on %s: shape %s, rel err %.1e" % (name, ctx.device, tuple(got.shape), err),
            {"rel_error": err, "tolerance": tol, "torchaudio": ta.__version__},
        )

    fn.__doc__ = (
        "torchaudio.transforms.%s of a 1 s, 16 kHz float32 waveform on the GPU matches the float64 CPU "
        "result within %.0e. The seed lists it as GPU-accelerated: skipped without a GPU, after torchaudio "
        "is imported.\n\nNot proven: other sample rates and sizes, or audio I/O." % (name, tol)
    )
    return fn


_AUDIO = (
    ("Spectrogram", lambda c: c(n_fft=400)),
    ("MelSpectrogram", lambda c: c(sample_rate=16000, n_fft=400, n_mels=40)),
    ("MFCC", lambda c: c(sample_rate=16000, n_mfcc=13, melkwargs={"n_fft": 400, "n_mels": 40})),
    ("Resample", lambda c: c(16000, 8000)),
)
for _name, _make in _AUDIO:
    gpu_feature(
        "features.torchaudio." + _name.lower(),
        "torchaudio.transforms." + _name,
        library="hipFFT/cuFFT" if _name != "Resample" else None,
        version=2,
    )(_audio_check(_name, _make))


@gpu_feature("features.apex.batch_norm", "APEX batch norm", library="apex syncbn", version=2)
def apex_batch_norm(ctx):
    """apex.parallel.SyncBatchNorm (world size 1) normalises a GPU batch like torch's batch norm in float64,
    on apex's own fused kernels (its ``syncbn`` extension: apex.parallel.optimized_sync_batchnorm), not
    MIOpen's or cuDNN's. An apex built without them falls back to a Python SyncBatchNorm over torch's own
    batch norm (NVIDIA/apex apex/parallel/__init__.py): partial, naming the import error.

    Not proven: synchronisation across several GPUs (world size 1), or apex's other fused kernels."""
    torch = ctx.torch
    apex = ctx.load("apex")
    ctx.load("apex.parallel")
    sbn = ctx.require_attr(apex, "parallel.SyncBatchNorm")
    ctx.require_gpu()
    x = randn(torch, 8, 16, 12, 12, seed=87) * 2 + 1
    ref = torch.nn.functional.batch_norm(x.double(), None, None, training=True, eps=1e-5)
    with process_group(torch, "nccl"):
        mod = sbn(16, affine=False).cuda().train()
        got = mod(x.cuda())
    err = ctx.assert_close(got, ref, 1e-4, "apex SyncBatchNorm")
    impl = getattr(sbn, "__module__", "")
    metrics = {"rel_error": err, "implementation": impl}
    if not impl.endswith("optimized_sync_batchnorm"):
        raise Partial(
            "partial support: apex's fused SyncBatchNorm kernels are not built (%s: %s); its Python "
            "fallback over torch's batch norm ran, rel err %.1e"
            % (impl, getattr(sbn, "syncbn_import_error", "no syncbn extension"), err),
            metrics,
        )
    ctx.claim(library="apex syncbn", source="apex.parallel.SyncBatchNorm from %s" % impl)
    return Report("apex's fused SyncBatchNorm (%s) rel err %.1e" % (impl, err), metrics)


@gpu_feature("features.torch_tensorrt", "torch-tensorrt", library="TensorRT")
def torch_tensorrt(ctx):
    """torch_tensorrt compiles a small MLP for the GPU and the engine reproduces the eager output.

    Not proven: speed-ups, int8/fp16 engines, or models TensorRT partitions."""
    torch = ctx.torch
    trt = ctx.load("torch_tensorrt")
    comp = ctx.require_attr(trt, "compile")
    ctx.require_gpu()
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)
    ).eval()
    x = randn(torch, 4, 32, seed=88)
    with torch.no_grad():
        ref = copy.deepcopy(model).double()(x.double())
        engine = attempt("torch_tensorrt.compile", lambda: comp(model.cuda(), inputs=[x.cuda()]))
        got = engine(x.cuda())
    err = ctx.assert_close(got, ref, 5e-3, "TensorRT engine")
    return Report("TensorRT engine rel err %.1e" % err, {"rel_error": err})
