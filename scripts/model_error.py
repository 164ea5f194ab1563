#!/usr/bin/env python3
"""The autoscheduler's cost model against measured times over the suite
(issue 18's "model's error"): for each case, kiln-lab runs the shipped
schedules and the auto row, whose N best candidates by predicted cost are
autotuned (run and timed as the rows are). Printed per case:

  rows rho   Spearman's rank correlation of predicted and measured time over
             the case's schedules (unfused, fused, host_tiled, ..., auto), as
             kiln-lab computes it (report.json's rank_correlation)
  cands rho  the same over the autotune candidates (the schedules the search
             ranked best, so a narrow range of predictions; ties in the
             predictions take their mean rank, and "nan" means the model
             predicted them all the same)
  choice     the model's choice's measured time over the fastest candidate's
             (1.00: autotuning would not have changed the schedule)
  spread     how far predicted / measured varies over the case's rows: the
             geometric standard deviation of that ratio (1.00: every row
             off by the same factor). Unlike rho over four rows, which
             moves in steps of 0.2-0.4 when two rows within the noise swap,
             it changes smoothly with the model's error.

The target is the bench's (host-fast_math: without it the search may not
reassociate float sums, which hand schedules with rfactor do anyway). By
default one thread (KILN_NUM_THREADS=1, which the model reads too) and
process CPU time, so that a shared machine's load matters less.

    scripts/model_error.py --lab build/bin/kiln-lab --autotune 8 --runs 5
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

GEMM = ["--shape", "A=512x512", "--shape", "B=512x512", "--shape", "bias=512", "--shape", "output=512x512"]
CONV = ["--shape", "input=64x58x58", "--shape", "weights=64x64x3x3", "--shape", "bias=64", "--shape", "mean=64",
        "--shape", "variance=64", "--shape", "gamma=64", "--shape", "beta=64", "--shape", "output=64x56x56"]
ATTENTION = ["--shape", "Q=64x1024", "--shape", "K=64x1024", "--shape", "V=64x1024", "--shape", "output=64x1024"]
IMAGE = ["--size", "1024x1024"]

# (case, generator, arguments, tolerance)
CASES = [
    ("blur3x3", "blur3x3", IMAGE, None),
    ("unsharp", "unsharp", IMAGE, None),
    ("harris", "harris", IMAGE, None),
    ("luma_blur5x5", "luma_blur5x5", IMAGE, None),
    ("softplus", "elementwise_chain", IMAGE + ["--param", "variant=softplus"], None),
    ("tanh_affine", "elementwise_chain", IMAGE + ["--param", "variant=tanh_affine"], None),
    ("bias_gelu", "bias_gelu", IMAGE, None),
    ("subtract_mean", "subtract_mean", IMAGE, None),
    ("layernorm", "layernorm", IMAGE, "1e-4"),  # host_tiled's rfactor reassociates: 1.7e-5 at 1024 wide
    ("softmax", "softmax", IMAGE, None),
    ("gemm", "gemm", GEMM, "1e-4"),
    ("conv_bn_relu", "conv_bn_relu", CONV, "1e-4"),
    ("attention", "attention", ATTENTION, "1e-5"),
]


def run_case(args, case, generator, extra, tolerance, out_root):
    out = os.path.join(out_root, case)
    cmd = [args.lab, generator, "--auto", "--autotune", str(args.autotune), "--runs", str(args.runs),
           "--target", args.target, "--out", out] + extra
    if args.cpu_time:
        cmd.append("--cpu-time")
    if tolerance:
        cmd += ["--tolerance", tolerance]
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # no spinning threads in the CPU time
    if args.threads:
        env["KILN_NUM_THREADS"] = str(args.threads)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    report = os.path.join(out, "report.json")
    if p.returncode not in (0, 2) or not os.path.exists(report):
        return {"case": case, "error": p.stdout.strip().splitlines()[-1:] or ["exit %d" % p.returncode]}
    j = json.load(open(report))
    rows = [(s["predicted_ms"], s["best_ms"], s["name"]) for s in j["schedules"]
            if "error" not in s and s.get("predicted_ms", 0) > 0]
    cands = []
    for s in j["schedules"]:
        if s.get("name") == "auto":
            cands = [(c["predicted_ms"], c["measured_ms"]) for c in s.get("autotuned", [])]
    choice = cands[0][1] / min(m for _, m in cands) if cands else float("nan")

    def rho(value):  # kiln-lab's figure; null when there is no ranking
        return float("nan") if value is None else value

    ratios = [math.log(p / m) for p, m, _ in rows if m > 0]
    centre = sum(ratios) / len(ratios) if ratios else 0
    spread = math.exp(math.sqrt(sum((r - centre) ** 2 for r in ratios) / len(ratios))) if ratios else float("nan")
    cands_rho = next((s.get("autotuned_rank_correlation") for s in j["schedules"] if s.get("name") == "auto"), None)
    return {"case": case, "rows": rows, "cands": cands, "rows_rho": rho(j.get("rank_correlation")),
            "cands_rho": rho(cands_rho), "choice": choice, "spread": spread, "mismatch": p.returncode == 2}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lab", default="build/bin/kiln-lab")
    ap.add_argument("--autotune", type=int, default=8)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--target", default="host-fast_math",
                    help="as the bench's Kiln rows: fast_math lets the search split float sums (rfactor)")
    ap.add_argument("--threads", type=int, default=1, help="KILN_NUM_THREADS (0: leave it unset)")
    ap.add_argument("--wall-clock", dest="cpu_time", action="store_false", help="time by wall clock, not CPU time")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--json", default="", help="write the per-case figures here")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    results = []
    with tempfile.TemporaryDirectory() as out_root:
        for case, generator, extra, tol in CASES:
            if only and case not in only:
                continue
            r = run_case(args, case, generator, extra, tol, out_root)
            results.append(r)
            if "error" in r:
                print("%-14s failed: %s" % (case, r["error"][0]), flush=True)
                continue
            print("%-14s rows rho %5.2f (%d)  cands rho %5.2f (%d)  choice %.2fx  spread %.2f%s" %
                  (case, r["rows_rho"], len(r["rows"]), r["cands_rho"], len(r["cands"]), r["choice"], r["spread"],
                   "  MISMATCH" if r["mismatch"] else ""), flush=True)
    ok = [r for r in results if "error" not in r]

    def mean(values):
        values = [v for v in values if not math.isnan(v)]
        return sum(values) / len(values) if values else float("nan")

    def geomean(values):
        values = [v for v in values if not math.isnan(v)]
        return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")

    print("mean over %d cases: rows rho %.2f, cands rho %.2f; model's choice within 5%% of the fastest "
          "candidate in %d of %d; spread geomean %.2f, worst %.2f" %
          (len(ok), mean([r["rows_rho"] for r in ok]), mean([r["cands_rho"] for r in ok]),
           sum(1 for r in ok if r["choice"] <= 1.05), len(ok), geomean([r["spread"] for r in ok]),
           max([r["spread"] for r in ok if not math.isnan(r["spread"])], default=float("nan"))))
    if args.json:
        json.dump(results, open(args.json, "w"), indent=1)
    return 0 if len(ok) == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
