"""features: the torchtext, torchtune, torchserve and torchrec sections of the
seed. These libraries implement no kernels of their own ("ROCm support is
enabled by linking against ROCm libraries"): each check runs the package's
smallest real use on the CPU, then moves its tensors to the GPU as the seed
describes. Absent package: unsupported; installed but failing to import: fail;
no GPU: skip, with what the CPU part showed in the message. None of these
packages is installed in the local test images, so these paths have not run
with the package present (see docs/checks.md)."""

from __future__ import annotations

from ..context import Fail, Report, Skip
from ._common import randn
from .features import gpu_feature


def _gpu_part(ctx, cpu_note, metrics):
    if not ctx.gpu_available:
        raise Skip(
            "needs a GPU for the row's GPU part; on the CPU: %s (device: cpu)" % cpu_note, metrics
        )


@gpu_feature("features.torchtext", "torchtext")
def torchtext(ctx):
    """torchtext tokenizes text (get_tokenizer("basic_english")), builds a vocabulary and maps tokens to indices;
    an EmbeddingBag over those indices on the GPU matches the float64 CPU result.

    Not proven: torchtext's datasets (no network), its C++ ops beyond the vocabulary, or training."""
    torch = ctx.torch
    tt = ctx.load("torchtext")
    utils = ctx.load("torchtext.data.utils")
    vocab_mod = ctx.load("torchtext.vocab")
    tok = ctx.require_attr(utils, "get_tokenizer")("basic_english")
    lines = [
        "The GPU computes, the CPU waits.",
        "A matrix of truth: the cells claim no more than measured.",
    ]
    tokens = [tok(line) for line in lines]
    vocab = ctx.require_attr(vocab_mod, "build_vocab_from_iterator")(
        iter(tokens), specials=["<unk>"]
    )
    vocab.set_default_index(vocab["<unk>"])
    ids = torch.tensor([vocab[t] for t in tokens[0] + tokens[1]], dtype=torch.long)
    if tokens[0][:2] != ["the", "gpu"] or len(set(ids.tolist())) < 10:
        raise Fail("tokenizer/vocab gave %s -> %s" % (tokens[0][:4], ids.tolist()[:8]))
    metrics = {
        "torchtext": getattr(tt, "__version__", "?"),
        "vocab": len(vocab),
        "tokens": int(ids.numel()),
    }
    _gpu_part(
        ctx, "tokenizer and vocab map %d tokens to %d ids" % (ids.numel(), len(vocab)), metrics
    )
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(len(vocab), 16, mode="mean")
    offsets = torch.tensor([0, len(tokens[0])])
    ref = bag.double()(ids, offsets)
    got = ctx.observe(lambda: bag.float().cuda()(ids.cuda(), offsets.cuda()))
    err = ctx.assert_close(got, ref, 1e-5, "EmbeddingBag over torchtext ids")
    return Report(
        "torchtext %s: %d tokens, EmbeddingBag on the GPU rel err %.1e"
        % (metrics["torchtext"], ids.numel(), err),
        dict(metrics, rel_error=err),
    )


@gpu_feature("features.torchtune", "torchtune")
def torchtune(ctx):
    """torchtune's building blocks on the GPU: RMSNorm matches x / rms(x) * scale in float64 and
    RotaryPositionalEmbeddings preserve each position's vector norms.

    Not proven: fine-tuning recipes, model downloads (no network) or distributed training."""
    torch = ctx.torch
    tune = ctx.load("torchtune")
    modules = ctx.load("torchtune.modules")
    rms_cls = ctx.require_attr(modules, "RMSNorm")
    rope_cls = ctx.require_attr(modules, "RotaryPositionalEmbeddings")
    metrics = {"torchtune": getattr(tune, "__version__", "?")}
    _gpu_part(
        ctx,
        "torchtune %s imports; RMSNorm and RotaryPositionalEmbeddings exist" % metrics["torchtune"],
        metrics,
    )
    x = randn(torch, 2, 8, 4, 32, seed=130)
    rms = rms_cls(32).cuda()
    got = ctx.observe(lambda: rms(x.cuda()))
    xd = x.double()
    ref = (
        xd
        / torch.sqrt(xd.pow(2).mean(-1, keepdim=True) + rms.eps)
        * rms.scale.detach().double().cpu()
    )
    err = ctx.assert_close(got, ref, 1e-5, "torchtune RMSNorm")
    rope = rope_cls(dim=32, max_seq_len=16).cuda()
    y = rope(x.cuda())
    err_norm = ctx.assert_close(
        y.norm(dim=-1), x.double().norm(dim=-1), 1e-5, "RoPE preserves norms"
    )
    return Report(
        "torchtune %s: RMSNorm rel err %.1e, RoPE norms %.1e on the GPU"
        % (metrics["torchtune"], err, err_norm),
        dict(metrics, rel_error=max(err, err_norm)),
    )


@gpu_feature("features.torchserve", "torchserve")
def torchserve(ctx):
    """torchserve's handler API (ts.torch_handler.base_handler.BaseHandler) runs inference for a small model on the
    GPU: the handler's inference() output matches float64.

    Not proven: the model server itself (it needs Java and a network port), model archives, or batching."""
    torch = ctx.torch
    ts = ctx.load("ts")
    base = ctx.load("ts.torch_handler.base_handler")
    handler_cls = ctx.require_attr(base, "BaseHandler")
    version = getattr(ts, "__version__", None) or getattr(
        ctx.load("ts.version"), "__version__", "?"
    )
    metrics = {"torchserve": str(version)}
    _gpu_part(ctx, "torchserve %s imports; BaseHandler exists" % version, metrics)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)
    ).eval()
    ref = model.double()(randn(torch, 4, 16, seed=131).double())
    h = handler_cls()
    h.device = torch.device("cuda")
    h.model = model.float().cuda()
    h.initialized = True
    got = ctx.observe(lambda: h.inference(randn(torch, 4, 16, seed=131)))
    err = ctx.assert_close(got, ref, 1e-5, "torchserve BaseHandler.inference")
    return Report(
        "torchserve %s BaseHandler.inference on the GPU: rel err %.1e" % (version, err),
        dict(metrics, rel_error=err),
    )


@gpu_feature("features.torchrec", "torchrec")
def torchrec(ctx):
    """torchrec's EmbeddingBagCollection pools a KeyedJaggedTensor of ids on the GPU; each pooled embedding equals
    the sum of the table rows of its ids (float64 reference).

    Not proven: sharding (DistributedModelParallel), fbgemm-gpu's fused kernels beyond this lookup, or training."""
    torch = ctx.torch
    rec = ctx.load("torchrec")
    ebc_cls = ctx.require_attr(rec, "EmbeddingBagCollection")
    cfg_cls = ctx.require_attr(rec, "EmbeddingBagConfig")
    kjt_cls = ctx.require_attr(rec, "KeyedJaggedTensor")
    metrics = {"torchrec": getattr(rec, "__version__", "?")}
    _gpu_part(
        ctx, "torchrec %s imports; EmbeddingBagCollection exists" % metrics["torchrec"], metrics
    )
    torch.manual_seed(0)
    ebc = ebc_cls(
        tables=[cfg_cls(name="t0", embedding_dim=8, num_embeddings=20, feature_names=["f0"])],
        device=torch.device("cuda"),
    )
    values = torch.tensor([1, 2, 5, 7, 7, 19])
    lengths = torch.tensor([2, 1, 3])
    kjt = kjt_cls.from_lengths_sync(keys=["f0"], values=values.cuda(), lengths=lengths.cuda())
    pooled = ctx.observe(lambda: ebc(kjt).to_dict()["f0"])
    table = ebc.embedding_bags["t0"].weight.detach().double().cpu()
    ref = torch.stack([table[[1, 2]].sum(0), table[[5]].sum(0), table[[7, 7, 19]].sum(0)])
    err = ctx.assert_close(pooled, ref, 1e-5, "torchrec pooled embeddings")
    return Report(
        "torchrec %s: pooled 3 bags on the GPU, rel err %.1e" % (metrics["torchrec"], err),
        dict(metrics, rel_error=err),
    )
