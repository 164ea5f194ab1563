#!/usr/bin/env python3
"""Merges several bench result files (apps/bench --json) into the table of
docs/performance.md: each system's minimum best time over the runs, time
relative to Kiln's (below 1: faster than Kiln), Kiln's % of the roofline in
the run of its minimum, and the minimum compile CPU time.

    for i in 1 2 3; do ./build/bin/bench --runs 5 --json run$i.json; done
    scripts/bench_table.py run1.json run2.json run3.json
"""
import json
import math
import sys


def load(paths):
    runs = [json.load(open(p)) for p in paths]
    cases = {}  # name -> system -> list of (entry, run)
    order = []
    for run in runs:
        for case in run["cases"]:
            name = case["case"]
            if name not in cases:
                cases[name] = {}
                order.append(name)
            for e in case["systems"]:
                cases[name].setdefault(e["system"], []).append((e, case, run))
    return runs, cases, order


def main(paths):
    runs, cases, order = load(paths)
    triads = [r["roofline"]["triad_gb_per_s"] for r in runs]
    peaks = [r["roofline"]["fma_peak_gflop_per_s"] for r in runs]
    print(f"{len(runs)} runs; triad {min(triads):.1f}-{max(triads):.1f} GB/s, "
          f"FMA peak {min(peaks):.0f}-{max(peaks):.0f} GFLOP/s\n")
    print("| case | Kiln best ms | Halide 14 | anchors | Kiln % roofline | compile CPU ms Kiln / Halide |")
    print("| --- | ---: | --- | --- | ---: | --- |")
    logs, worst = [], []
    grads = []
    for name in order:
        systems = cases[name]
        if "kiln" not in systems:
            grads.append(name)
            continue
        kiln_e, kiln_case, _ = min(systems["kiln"], key=lambda t: t[0]["best_ms"])
        kiln = kiln_e["best_ms"]
        rate = ""
        if "gflop_per_s" in kiln_e:
            rate = f" ({kiln_e['gflop_per_s']:.1f} GFLOP/s)"
        halide, anchors = "–", []
        for system, entries in systems.items():
            if system == "kiln":
                continue
            ran = [e["best_ms"] for e, _, _ in entries if "best_ms" in e]
            if not ran:  # refused or failed in every run: say so
                anchors.append(f"{system} failed ({entries[0][0].get('failure', 'no time')[:60]})")
                continue
            best = min(ran)
            same = entries[0][0].get("same_work", True)
            if system == "halide":
                halide = f"{best / kiln:.2f}"
                logs.append(math.log(kiln / best))
                worst.append((kiln / best, name))
            else:
                anchors.append(f"{system} {best / kiln:.2f}" + ("" if same else " (other work)"))

        def compile_min(system):
            entries = [e for e, _, _ in systems.get(system, [])]
            vals = [e["compile_cpu_ms"] for e in entries if "compile_cpu_ms" in e]
            if not vals and any(e.get("compile_reused") for e in entries):
                return "reused"  # an earlier case compiled the same kernel
            return f"{min(vals):.0f}" if vals else "–"

        print(f"| {name} | {kiln:.2f}{rate} | {halide} | {', '.join(anchors) or '–'} | "
              f"{kiln_e['percent_of_roofline']:.0f}% | {compile_min('kiln')} / {compile_min('halide')} |")
    if logs:
        print(f"\nGeomean Kiln / Halide time: {math.exp(sum(logs) / len(logs)):.2f}")
        print("Kiln / Halide time above 1.2: " +
              (", ".join(f"{n} {r:.2f}" for r, n in sorted(worst, reverse=True) if r > 1.2) or "none"))
    if grads:
        print_gradients(cases, grads)


def print_gradients(cases, names):
    """The backward cases: each kernel's minimum, every pair's time over the
    forward kernel's (issue 19's measure; a saving schedule's pair with its
    two kernels' times apart), Halide's backward over Kiln's."""
    print("\n| case | forward ms | backward ms | fwd+bwd / forward | Halide backward / Kiln backward | "
          "compile CPU ms backward Kiln / Halide |")
    print("| --- | ---: | ---: | --- | --- | --- |")
    for name in names:
        systems = cases[name]

        def best(system):
            return min(e["best_ms"] for e, _, _ in systems[system]) if system in systems else None

        def compile_min(system):
            vals = [e["compile_cpu_ms"] for e, _, _ in systems.get(system, []) if "compile_cpu_ms" in e]
            return f"{min(vals):.0f}" if vals else "–"

        fwd, bwd = best("kiln forward"), best("kiln backward")
        def pair(system):
            schedule = system[len("kiln fwd+bwd"):].strip()
            text = f"{schedule or 'recompute'} {best(system) / fwd:.2f}"
            parts = [best(f"kiln {k} {schedule}") for k in ("forward", "backward")] if schedule else []
            if parts and None not in parts:
                text += f" ({parts[0]:.2f} + {parts[1]:.2f} ms)"
            return text

        pairs = [pair(s) for s in systems if s.startswith("kiln fwd+bwd")]
        halide = [f"{s[len('halide backward'):].strip() or 'same schedule'} {best(s) / bwd:.2f}"
                  for s in systems if s.startswith("halide backward")]
        print(f"| {name} | {fwd:.2f} | {bwd:.2f} | {', '.join(pairs)} | {', '.join(halide) or '–'} | "
              f"{compile_min('kiln backward')} / {compile_min('halide backward')} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
