#!/usr/bin/env python3
"""Where a wgmma tile's time goes, from a build with PRT_DCN_PROF.

A build of plugins/deform_conv/deform_conv_wgmma.cu compiled with
-DPRT_DCN_PROF prints, for thread 0 of every fourth block of the fused
kernel, "PROF block sm steps t0 t1 t2 t3 t4 t5" (global timer, ns): start,
corner table built, first gather issued, pipeline full, MMAs done, output
written. Run the benchmark with such a build and give its output here:

    bench_dcn --cases F --no-cpu --types f16 --iters 3 > prof.txt
    python3 bench/dcn/tile_phases.py prof.txt --steps 36

Launches are told apart by gaps of more than 20 us with no block running;
for each launch of the given steps per block (the tile of the case), the
median time per phase of the sampled blocks is printed. The printing itself
slows the blocks that print, so the totals run above the untraced kernel's;
the phases before the print are what it is for.
"""
import argparse
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--steps", type=int, required=True, help="steps per block of the launches to report")
    ap.add_argument("--last", type=int, default=2, help="how many of the matching launches to print")
    a = ap.parse_args()
    rows = []
    with open(a.file) as f:
        for line in f:
            p = line.split()
            if len(p) == 10 and p[0] == "PROF":
                rows.append((int(p[1]), int(p[2]), int(p[3]), [int(v) for v in p[4:10]]))
    if not rows:
        raise SystemExit(f"{a.file}: no PROF lines (was the library built with -DPRT_DCN_PROF?)")
    rows.sort(key=lambda r: r[3][0])
    launches, cur, end = [], [rows[0]], rows[0][3][5]
    for r in rows[1:]:
        if r[3][0] > end + 20000:
            launches.append(cur)
            cur = []
        cur.append(r)
        end = max(end, r[3][5])
    launches.append(cur)
    sel = [x for x in launches if x[0][2] == a.steps]
    if not sel:
        have = sorted({x[0][2] for x in launches})
        raise SystemExit(f"no launch with {a.steps} steps per block; found {have}")
    names = ["table", "first gather", "pipeline full", "K loop", "output"]
    for x in sel[-a.last:]:
        t0 = min(r[3][0] for r in x)
        t1 = max(r[3][5] for r in x)
        med = [statistics.median(r[3][k + 1] - r[3][k] for r in x) / 1e3 for k in range(5)]
        tot = statistics.median(r[3][5] - r[3][0] for r in x) / 1e3
        parts = ", ".join(f"{n} {v:.2f}" for n, v in zip(names, med))
        print(f"launch of {t1 / 1e3 - t0 / 1e3:.1f} us, {len(x)} blocks sampled; median us per block: {parts}; "
              f"total {tot:.2f} ({med[3] / a.steps:.2f} per step)")


if __name__ == "__main__":
    main()
