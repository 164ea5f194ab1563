#!/usr/bin/python3
"""Kiln's backward cases and PyTorch's autograd in one run, one table.

Runs the backward cases of apps/bench (build/bin/bench --only <the grad
cases>) and then scripts/bench_torch_grad.py on the same machine, one right
after the other, and joins their results by case:

- Kiln fwd, Kiln fwd+bwd and their ratio: the forward generator under
  host_tiled.sched, then forward + backward (bench's "kiln forward" and
  "kiln fwd+bwd" rows);
- torch fwd, torch fwd+bwd and their ratio: eager PyTorch, same shapes,
  float32, the same thread count;
- fwd+bwd time, Kiln over torch;
- bytes kept between the passes beyond the case's inputs: Kiln's host_tiled
  schedules recompute every forward value they need (0 bytes); the
  schedules that save some (bench's "kiln fwd+bwd <schedule>" rows: gemm's
  saved and saved_mask, conv's saved) with their residual's bytes and
  time; against eager autograd and AOTAutograd's min-cut partition.

    /usr/bin/python3 scripts/bench_grad_vs_torch.py [--build build] [--runs 7] [--json out.json]

Needs a built bench (the test command of the README builds it) and torch
(Debian: python3-torch); the test suite does not use this script.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

CASES = "blur3x3_grad,softplus_grad,bias_gelu_grad,softmax_grad,layernorm_grad,gemm_relu_grad,conv_bn_relu_grad,attention_grad"


def best(case, system):
    for s in case["systems"]:
        if s["system"] == system:
            return s["best_ms"]
    return None


def key(name):
    # "bias+gelu grad 4096x1024" (bench) and "bias+GELU 4096x1024" (torch): "bias+gelu".
    return name.lower().split()[0]


def mb(b):
    return "%.1f MB" % (b / 1e6) if b >= 1e5 else "%.1f kB" % (b / 1e3)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="the build directory holding bin/bench")
    ap.add_argument("--runs", type=int, default=7, help="timed runs per system (the minimum is reported)")
    ap.add_argument("--json", metavar="FILE", help="also write the joined results as JSON")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    with tempfile.TemporaryDirectory() as tmp:
        kiln_json, torch_json = os.path.join(tmp, "kiln.json"), os.path.join(tmp, "torch.json")
        subprocess.run([os.path.join(args.build, "bin", "bench"), "--only", CASES, "--runs", str(args.runs),
                        "--json", kiln_json, "--svg", os.path.join(tmp, "chart.svg")], check=True, env=env,
                       stdout=sys.stderr)
        subprocess.run([sys.executable, os.path.join(here, "bench_torch_grad.py"), "--runs", str(args.runs),
                        "--json", torch_json], check=True, env=env, stdout=sys.stderr)
        with open(kiln_json) as f:
            kiln = json.load(f)
        with open(torch_json) as f:
            torch = json.load(f)
    by_key = {key(r["case"]): r for r in torch["cases"]}
    rows = []
    for c in kiln["cases"]:
        t = by_key.get(key(c["case"]))
        fwd, both = best(c, "kiln forward"), best(c, "kiln fwd+bwd")
        if t is None or fwd is None or both is None:
            continue
        # The schedules that save forward values: "kiln fwd+bwd <schedule>",
        # the residual's bytes in the row's note.
        saved = [{"schedule": s["system"][len("kiln fwd+bwd "):], "fwd_bwd_ms": s["best_ms"],
                  "bytes": int(re.search(r"\((\d+) bytes\)", s["note"]).group(1))}
                 for s in c["systems"] if s["system"].startswith("kiln fwd+bwd ")]
        rows.append({"case": t["case"], "kiln_fwd_ms": fwd, "kiln_fwd_bwd_ms": both, "kiln_saved": saved,
                     "torch_fwd_ms": t["fwd_ms"], "torch_fwd_bwd_ms": t["fwd_bwd_ms"],
                     "torch_saved_eager_beyond_inputs_bytes": t["saved_eager_beyond_inputs_bytes"],
                     "torch_saved_aot_beyond_inputs_bytes": t.get("saved_aot_beyond_inputs_bytes")})
    print("%s; Kiln %s; torch %s; %s threads; best of %d runs" %
          (torch["info"]["cpu"], kiln["kiln_target"], torch["info"]["torch"], kiln["threads"], args.runs))
    print()
    print("| case | Kiln fwd ms | Kiln fwd+bwd ms | Kiln (fwd+bwd) / fwd | torch fwd ms | torch fwd+bwd ms "
          "| torch (fwd+bwd) / fwd | fwd+bwd Kiln / torch | kept beyond inputs: Kiln | torch eager "
          "| torch AOT min-cut |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |")
    for r in rows:
        aot = r["torch_saved_aot_beyond_inputs_bytes"]
        # Kiln's fwd+bwd: host_tiled (recomputing, 0 bytes), and each saving
        # schedule as "schedule: time (ratio to fwd, to torch), bytes".
        kept = "host_tiled 0 B" + "".join(
            "; %s %s, %.2f ms (%.2fx, %.2fx torch)" % (s["schedule"], mb(s["bytes"]), s["fwd_bwd_ms"],
                                                       s["fwd_bwd_ms"] / r["kiln_fwd_ms"],
                                                       s["fwd_bwd_ms"] / r["torch_fwd_bwd_ms"])
            for s in r["kiln_saved"])
        print("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %s | %s |" % (
            r["case"], r["kiln_fwd_ms"], r["kiln_fwd_bwd_ms"], r["kiln_fwd_bwd_ms"] / r["kiln_fwd_ms"],
            r["torch_fwd_ms"], r["torch_fwd_bwd_ms"], r["torch_fwd_bwd_ms"] / r["torch_fwd_ms"],
            r["kiln_fwd_bwd_ms"] / r["torch_fwd_bwd_ms"], kept,
            mb(r["torch_saved_eager_beyond_inputs_bytes"]), "-" if aot is None else mb(aot)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kiln_target": kiln["kiln_target"], "torch": torch["info"], "runs": args.runs, "cases": rows},
                      f, indent=1)


if __name__ == "__main__":
    main()
