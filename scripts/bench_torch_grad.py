#!/usr/bin/python3
"""PyTorch anchor for the backward cases of apps/bench (apps/bench/suite_grad.cpp).

For each case, with the shapes of suite_grad.cpp, float32 and
torch.set_num_threads(2), this measures:

- torch fwd: the forward alone under torch.no_grad();
- torch fwd+bwd: the forward with autograd recording, then
  output.backward(d_output) with a fixed random d_output, the vector-Jacobian
  product of loss = sum(output * d_output), which is what a Kiln backward
  generator computes from its d_output input; the gradients are those the
  Kiln generator outputs (d_input; d_bias; d_gamma, d_beta; d_A, d_B);
- saved eager: bytes of the tensors eager autograd saves for backward
  (torch.autograd.graph.saved_tensors_hooks), each distinct storage once,
  and of these the bytes that are not the case's inputs;
- saved AOT, AOT fwd+bwd: the same bytes, and the forward + backward time,
  under functorch's AOTAutograd with min_cut_rematerialization_partition and
  functorch.compile.default_decompositions (needs networkx; Debian:
  python3-networkx); the two graphs run as traced, without a compiler.
  The saved tensors are the forward graph's outputs after the real one.
  Skipped, with a note, when functorch.compile or networkx does not import.

The JSON output also holds the largest difference between the AOT and the
eager gradients, relative to the largest eager gradient of each input.
Times are the minimum of --runs runs after one warm-up run, in ms. The
inputs are drawn from the ranges of suite_grad.cpp, not the same values.

    /usr/bin/python3 scripts/bench_torch_grad.py [--runs 7] [--json out.json]

Needs torch (Debian: python3-torch); the test suite does not use this script.
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

try:
    from functorch import compile as fc
except ImportError as e:  # older or newer torch without functorch.compile
    fc = None
    FC_ERROR = str(e)


def uniform(shape, lo, hi, gen):
    return torch.rand(shape, generator=gen) * (hi - lo) + lo


# Each case: name, function of the inputs, inputs (name, shape, lo, hi,
# whether Kiln's backward generator outputs its gradient; a running
# statistic such as BN's mean is an input without one). Shapes are
# (rows, cols): Kiln's buffer {cols, rows} with x the inner dimension.
def blur3x3(inp):
    # repeat_edge, then (left + centre + right) / 3 along x, then along y.
    p = F.pad(inp[None], (1, 1, 1, 1), mode="replicate")[0]
    bx = (p[:, :-2] + p[:, 1:-1] + p[:, 2:]) / 3
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3


def softplus(inp):
    return torch.log(torch.exp(inp) + 1.0)  # the chain of elementwise_chain


def bias_gelu(inp, bias):
    return F.gelu(inp + bias, approximate="tanh")


def softmax(inp):
    return torch.softmax(inp, dim=-1)


def layernorm(inp, gamma, beta):
    return F.layer_norm(inp, (inp.shape[-1],), gamma, beta, eps=1e-5)


def gemm_relu(a, b, bias):
    return torch.relu(torch.addmm(bias, a, b))


def conv_bn_relu(inp, w, bias, mean, variance, gamma, beta):
    # conv_bn_relu's algorithm: a valid 3x3 convolution, batch normalization
    # with running statistics (mean, variance: not trained), ReLU. NCHW here.
    conv = F.conv2d(inp, w, bias)
    c = lambda t: t[None, :, None, None]
    return torch.relu((conv - c(mean)) * c(gamma) / torch.sqrt(c(variance) + 1e-5) + c(beta))


def attention(q, k, v):
    # attention's algorithm: softmax(Q K^T / sqrt(d)) V, one head.
    return torch.softmax(q @ k.t() / math.sqrt(q.shape[1]), dim=-1) @ v


N, R, C, G = 4096, 4096, 1024, 512
CH, HW, SEQ, D = 64, 56, 1024, 64  # conv: channels in and out, output size; attention
CASES = [
    ("blur3x3 4096²", blur3x3, [("input", (N, N), 0, 1, True)]),
    ("softplus 4096²", softplus, [("input", (N, N), -4, 4, True)]),
    ("bias+GELU 4096x1024", bias_gelu, [("input", (R, C), -4, 4, True), ("bias", (C,), -1, 1, True)]),
    ("softmax 4096x1024", softmax, [("input", (R, C), -8, 8, True)]),
    ("layernorm 4096x1024", layernorm,
     [("input", (R, C), -2, 2, True), ("gamma", (C,), 0.5, 1.5, True), ("beta", (C,), -0.5, 0.5, True)]),
    ("GEMM+bias+ReLU 512", gemm_relu,
     [("A", (G, G), -1, 1, True), ("B", (G, G), -1, 1, True), ("bias", (G,), -1, 1, True)]),
    ("conv3x3+BN+ReLU 56x56x64", conv_bn_relu,
     [("input", (1, CH, HW + 2, HW + 2), -1, 1, True), ("weights", (CH, CH, 3, 3), -0.2, 0.2, True),
      ("bias", (CH,), -0.5, 0.5, True), ("mean", (CH,), -0.5, 0.5, False), ("variance", (CH,), 0.5, 2, False),
      ("gamma", (CH,), 0.5, 1.5, True), ("beta", (CH,), -0.5, 0.5, True)]),
    ("attention 1024, d 64", attention,
     [("Q", (SEQ, D), -1, 1, True), ("K", (SEQ, D), -1, 1, True), ("V", (SEQ, D), -1, 1, True)]),
]


def best_ms(fn, runs):
    fn()
    best = math.inf
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def storage_key(t):
    return t.storage().data_ptr()


def saved_bytes(tensors, inputs):
    """Bytes of the distinct storages among tensors: (all, not an input's)."""
    input_keys = {storage_key(t) for t in inputs}
    sizes = {}
    for t in tensors:
        k = storage_key(t)
        sizes[k] = max(sizes.get(k, 0), t.numel() * t.element_size())
    total = sum(sizes.values())
    return total, total - sum(v for k, v in sizes.items() if k in input_keys)


def eager_saved(fn, inputs):
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(*inputs)
    result = saved_bytes(packed, inputs)
    del out, packed
    return result


def aot_min_cut(fn, inputs):
    """The function under AOTAutograd + min-cut, and a list its forward graph
    appends the saved tensors of each call to."""
    captured = []

    def fw_compiler(gm, _example):
        def run(args):
            outs = gm(*args)
            captured.append(list(outs[1:]))  # one real output, then the saved
            return outs

        run._boxed_call = True
        return run

    compiled = fc.aot_function(fn, fw_compiler, fc.nop,
                               partition_fn=fc.min_cut_rematerialization_partition,
                               decompositions=fc.default_decompositions)
    return compiled, captured


def run_case(name, fn, specs, runs, gen, use_aot):
    inputs = [uniform(shape, lo, hi, gen) for _, shape, lo, hi, _ in specs]
    for t, spec in zip(inputs, specs):
        t.requires_grad_(spec[4])
    with torch.no_grad():
        d_out = uniform(fn(*inputs).shape, -1, 1, gen)

    def forward():
        with torch.no_grad():
            fn(*inputs)

    def step(f):
        def go():
            for t in inputs:
                t.grad = None
            f(*inputs).backward(d_out)
        return go

    row = {"case": name, "fwd_ms": best_ms(forward, runs), "fwd_bwd_ms": best_ms(step(fn), runs)}
    row["saved_eager_bytes"], row["saved_eager_beyond_inputs_bytes"] = eager_saved(fn, inputs)
    if use_aot:
        compiled, captured = aot_min_cut(fn, inputs)
        step(fn)()
        eager_grads = [t.grad for t in inputs]
        row["aot_fwd_bwd_ms"] = best_ms(step(compiled), runs)
        # The partitioned graphs compute the same gradients, up to rounding.
        row["aot_grad_max_rel_diff"] = max(
            ((a - e).abs().max() / e.abs().max().clamp(min=1e-30)).item()
            for a, e in zip((t.grad for t in inputs), eager_grads) if e is not None)
        row["saved_aot_bytes"], row["saved_aot_beyond_inputs_bytes"] = saved_bytes(captured[-1], inputs)
        captured.clear()
    return row


def mb(b):
    return "%.1f MB" % (b / 1e6) if b >= 1e5 else "%.1f kB" % (b / 1e3)


def table(rows, use_aot):
    head = ["case", "torch fwd ms", "torch fwd+bwd ms", "(fwd+bwd) / fwd",
            "saved bytes eager (not inputs)"]
    if use_aot:
        head += ["saved bytes AOT min-cut (not inputs)", "AOT min-cut fwd+bwd ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        cells = [r["case"], "%.1f" % r["fwd_ms"], "%.1f" % r["fwd_bwd_ms"], "%.2f" % (r["fwd_bwd_ms"] / r["fwd_ms"]),
                 "%s (%s)" % (mb(r["saved_eager_bytes"]), mb(r["saved_eager_beyond_inputs_bytes"]))]
        if use_aot:
            cells += ["%s (%s)" % (mb(r["saved_aot_bytes"]), mb(r["saved_aot_beyond_inputs_bytes"])),
                      "%.1f" % r["aot_fwd_bwd_ms"]]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="timed runs per measurement (default 7)")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--only", help="comma-separated substrings of case names")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(19)
    use_aot, skip_reason = fc is not None, None if fc is not None else "functorch.compile: " + FC_ERROR
    if use_aot:
        try:
            import networkx  # noqa: F401  (min_cut_rematerialization_partition needs it)
        except ImportError as e:
            use_aot, skip_reason = False, str(e)
    rows = []
    for name, fn, specs in CASES:
        if args.only and not any(s in name for s in args.only.split(",")):
            continue
        rows.append(run_case(name, fn, specs, args.runs, gen, use_aot))

    info = {"cpu": cpu_model(), "torch": torch.__version__, "threads": torch.get_num_threads(), "runs": args.runs}
    print("CPU: %s; torch %s; %d threads; best of %d runs after a warm-up; float32"
          % (info["cpu"], info["torch"], info["threads"], info["runs"]))
    if not use_aot:
        print("AOTAutograd min-cut skipped: %s" % skip_reason)
    print()
    print(table(rows, use_aot))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "cases": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
