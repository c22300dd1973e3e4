#!/usr/bin/env python3
"""Peer comparison for ModulatedDeformConv2d, measured in one run.

    peer_dcn.py --bench PATH/bench_dcn [--cases ABCDEF] [--iters 50] [--threads 2] [--no-gpu | --no-cpu]
                [--cpu-rounds 3] [--out results.json]

Runs our bench_dcn --json, then on the same machine times
  GPU: torchvision.ops.deform_conv2d (with mask) and a cuDNN convolution of the
       same shape without offsets (torch.nn.functional.conv2d), on NCHW tensors
       (the layout ours takes) and on channels-last (NHWC) ones, fp32 and fp16,
       CUDA events around each call, warm-up, median, input sets rotated like
       bench_dcn does. TF32 is switched off for the fp32 torch runs: ours keeps
       fp32 accuracy (plain fp32, or the 3xTF32 split on tensor cores, whose
       error stays within fp32's: plugins/deform_conv/README.md).
  CPU: ONNX Runtime's DeformConv (model built with onnx.helper, opset 19),
       --threads intra-op threads (default 2; bench_dcn gets the same
       --threads), on A, B, C, E, median of 5 after a warm-up; ours and
       ONNX Runtime take turns for --cpu-rounds rounds (a CPU that other
       jobs share moves both by tens of percent between minutes), and the
       table gives each side's median and the median of the rounds' ratios.
and prints per case and precision: ours us (and "graph": one call captured into a
CUDA graph and replayed, the GPU time without the host's launch gaps), peer us,
ratio peer/ours (> 1: ours is faster), TFLOP/s and % of the floor. Also the fp16 accuracy of torchvision
on case A against fp32 on the same fp16 inputs.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

# id: N, Cin, Cout, H, W, stride, group, deformable_group
CASES = {
    "A": (1, 128, 128, 92, 160, 1, 1, 1),
    "B": (1, 512, 512, 23, 40, 1, 1, 1),
    "C": (1, 64, 64, 128, 128, 1, 1, 1),
    "D": (2, 128, 128, 200, 336, 2, 1, 4),
    "E": (1, 512, 512, 50, 84, 1, 32, 1),
    "F": (32, 256, 256, 64, 64, 1, 1, 1),
}
CPU_CASES = "ABCE"


def out_hw(c):
    n, cin, cout, h, w, s, g, dg = c
    return (h + 2 - 3) // s + 1, (w + 2 - 3) // s + 1


def gflop(c):
    n, cin, cout, h, w, s, g, dg = c
    ho, wo = out_hw(c)
    return 2.0 * n * cout * (cin // g) * 9 * ho * wo * 1e-9


def nbytes(c, elt):
    n, cin, cout, h, w, s, g, dg = c
    ho, wo = out_hw(c)
    el = n * cin * h * w + n * 27 * dg * ho * wo + cout * (cin // g) * 9 + cout + n * cout * ho * wo
    return el * elt


def floor_us(c, dtype):
    half = dtype in ("f16", "bf16")  # the same tensor-core rate for both
    rate = 790.0 if half else 67.0
    return max(gflop(c) * 1e-3 / rate * 1e6, nbytes(c, 2 if half else 4) / 4.3e12 * 1e6)


def make_inputs(c, rng):
    n, cin, cout, h, w, s, g, dg = c
    ho, wo = out_hw(c)
    x = rng.uniform(-1, 1, (n, cin, h, w)).astype(np.float32)
    off = rng.uniform(-2, 2, (n, 2 * dg * 9, ho, wo)).astype(np.float32)
    mask = rng.uniform(0, 1, (n, dg * 9, ho, wo)).astype(np.float32)
    wt = (rng.uniform(-1, 1, (cout, cin // g, 3, 3)) / np.sqrt(cin // g * 9)).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, (cout,)).astype(np.float32)
    return x, off, mask, wt, b


def run_ours(bench, cases, iters, threads, types, extra=()):
    cmd = [bench, "--json", "--cases", cases, "--iters", str(iters), "--threads", str(threads), "--types", types]
    cmd += list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit("bench_dcn failed: %d" % p.returncode)
    sys.stderr.write(p.stderr)
    return {(r["case"], r["device"], r["dtype"]): r for r in json.loads(p.stdout)}


def time_cuda(torch, fn, sets, iters):
    for i in range(10):
        fn(*sets[i % len(sets)])
    torch.cuda.synchronize()
    ts = []
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    for i in range(iters):
        args = sets[i % len(sets)]
        e0.record()
        fn(*args)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3)
    return float(np.median(ts))


def bench_torch(cases, iters, types):
    import torch
    import torchvision
    from torchvision.ops import deform_conv2d

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    res = {}
    print("torch %s torchvision %s, %s" % (torch.__version__, torchvision.__version__,
                                           torch.cuda.get_device_name(0)), flush=True)
    for cid in cases:
        c = CASES[cid]
        n, cin, cout, h, w, s, g, dg = c
        rng = np.random.default_rng(1234 + ord(cid))
        base = make_inputs(c, rng)
        set_bytes = sum(a.nbytes for a in base)
        nsets = min(8, (150 << 20) // set_bytes + 1)
        for dtype in types:
            tdt = {"f16": torch.float16, "bf16": torch.bfloat16}.get(dtype, torch.float32)
            sets = []
            for k in range(nsets):
                x, off, mask, wt, b = base if k == 0 else make_inputs(c, rng)
                sets.append(tuple(torch.from_numpy(a).to("cuda", tdt) for a in (x, off, mask, wt, b)))

            def dcn(x, off, mask, wt, b):
                return deform_conv2d(x, off, wt, b, stride=(s, s), padding=(1, 1), dilation=(1, 1), mask=mask)

            def conv(x, off, mask, wt, b):
                return torch.nn.functional.conv2d(x, wt, b, stride=s, padding=1, groups=g)

            # the same convolution with x and the weights already in channels-last memory (NHWC), the layout
            # cuDNN's fastest tensor-core kernels take; converted once, outside the timing
            sets_cl = [(x.contiguous(memory_format=torch.channels_last), off, mask,
                        wt.contiguous(memory_format=torch.channels_last), b) for x, off, mask, wt, b in sets]

            with torch.no_grad():
                # each peer on its own: a type one of them does not implement leaves the others
                for key, fn, ss in (("tv", dcn, sets), ("cudnn", conv, sets), ("cudnn_cl", conv, sets_cl)):
                    try:
                        res[(cid, key, dtype)] = time_cuda(torch, fn, ss, iters)
                    except Exception as e:
                        print("  %s %s case %s: %s" % (key, dtype, cid, str(e).splitlines()[0]), flush=True)
            del sets, sets_cl
            torch.cuda.empty_cache()
        print("  torch case %s done" % cid, flush=True)
    # fp16 accuracy of torchvision on case A (same fp16 inputs, fp32 result)
    c = CASES["A"]
    x, off, mask, wt, b = make_inputs(c, np.random.default_rng(7))
    wt *= 4.0  # outputs of magnitude ~4
    t16 = [torch.from_numpy(a).to("cuda", torch.float16) for a in (x, off, mask, wt, b)]
    with torch.no_grad():
        y16 = deform_conv2d(t16[0], t16[1], t16[3], t16[4], padding=(1, 1), mask=t16[2]).float()
        t32 = [a.float() for a in t16]
        y32 = deform_conv2d(t32[0], t32[1], t32[3], t32[4], padding=(1, 1), mask=t32[2])
    res["tv_f16_err"] = (float((y16 - y32).abs().max()), float(y32.abs().max()))
    return res


def cpu_model():
    """The host CPU's model name, from /proc/cpuinfo where there is one."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def load_avg():
    try:
        return "%.2f" % os.getloadavg()[0]
    except (OSError, AttributeError):
        return "unknown"


def ort_sessions(cases, threads):
    """One ONNX Runtime session and feed per CPU case: {case: (session, feed)}."""
    import onnx  # noqa: F401 (helper needs it)
    import onnxruntime as ort
    from onnx import TensorProto, helper

    res = {}
    for cid in cases:
        if cid not in CPU_CASES:
            continue
        c = CASES[cid]
        n, cin, cout, h, w, s, g, dg = c
        ho, wo = out_hw(c)
        x, off, mask, wt, b = make_inputs(c, np.random.default_rng(1234 + ord(cid)))
        node = helper.make_node("DeformConv", ["X", "W", "offset", "B", "mask"], ["Y"], kernel_shape=[3, 3],
                                strides=[s, s], pads=[1, 1, 1, 1], dilations=[1, 1], group=g, offset_group=dg)
        f = TensorProto.FLOAT
        graph = helper.make_graph([node], "dcn", [
            helper.make_tensor_value_info("X", f, list(x.shape)),
            helper.make_tensor_value_info("W", f, list(wt.shape)),
            helper.make_tensor_value_info("offset", f, list(off.shape)),
            helper.make_tensor_value_info("B", f, list(b.shape)),
            helper.make_tensor_value_info("mask", f, list(mask.shape)),
        ], [helper.make_tensor_value_info("Y", f, [n, cout, ho, wo])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        model.ir_version = 9  # opset 19 needs IR >= 9; older runtimes refuse newer IR versions
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        feed = {"X": x, "W": wt, "offset": off, "B": b, "mask": mask}
        sess.run(None, feed)
        res[cid] = (sess, feed)
    return res


def bench_ort(sessions):
    """Median wall time of 5 runs per case, us."""
    res = {}
    for cid, (sess, feed) in sessions.items():
        ts, cs = [], []
        for _ in range(5):
            t0, c0 = time.perf_counter(), time.process_time()
            sess.run(None, feed)
            ts.append((time.perf_counter() - t0) * 1e6)
            cs.append((time.process_time() - c0) * 1e6)
        res[cid] = float(np.median(ts))
        # process CPU time counts every thread of ORT's pool but not the time they waited for a core: compare
        # it with bench_dcn --probe's "process CPU time per call" when other jobs share the machine
        print("  ort case %s: process CPU time per call %.0f us (median of 5)" % (cid, float(np.median(cs))),
              flush=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--cases", default="ABCDEF")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--no-gpu", action="store_true")
    ap.add_argument("--no-cpu", action="store_true", help="GPU only: no CPU rounds against ONNX Runtime")
    ap.add_argument("--types", default="f32,f16,bf16")
    ap.add_argument("--cpu-rounds", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    types = a.types.split(",")
    cpu_cases = "" if a.no_cpu else "".join(c for c in a.cases if c in CPU_CASES)
    ours = {} if a.no_gpu else run_ours(a.bench, a.cases, a.iters, a.threads, a.types, ["--no-cpu"])
    try:
        tv = {} if a.no_gpu else bench_torch(a.cases, a.iters, types)
    except Exception as e:  # keep the other half of the comparison
        print("torch timing failed: %r" % (e,), flush=True)
        tv = {}
    rows = []
    print("\nGPU (us; ratio = torchvision / ours, > 1 means ours is faster)")
    print("%-4s %-4s %9s %9s %9s %7s %9s %8s %9s %8s %9s %8s %9s %8s %-13s %8s" % (
        "case", "type", "ours", "graph", "tv", "ratio", "cudnn", "ours/cdn", "cdn_nhwc", "ours/nhwc", "ours_TF/s",
        "ours%flr", "floor", "tv%flr", "kernel", "err"))
    nan = float("nan")
    for cid in a.cases:
        c = CASES[cid]
        for dtype in types:
            o = ours.get((cid, "cuda", dtype))
            if not o:
                continue
            t = tv.get((cid, "tv", dtype), nan)  # nan: torchvision has no kernel for the type
            fl = floor_us(c, dtype)
            row = dict(case=cid, dtype=dtype, device="cuda", ours_us=o["us"], tv_us=t,
                       cudnn_us=tv.get((cid, "cudnn", dtype)), cudnn_nhwc_us=tv.get((cid, "cudnn_cl", dtype)),
                       ratio=t / o["us"], ours_tflops=o["tflops"],
                       floor_us=fl, ours_pct_floor=100 * fl / o["us"], tv_pct_floor=100 * fl / t,
                       kernel=o.get("kernel", ""), f16_err=o.get("f16_err", -1), ymax=o.get("ymax", -1),
                       graph_us=o.get("graph_us", -1))
            rows.append(row)
            cdn = row["cudnn_us"] or nan
            ccl = row["cudnn_nhwc_us"] or nan
            err = "%8.1e" % row["f16_err"] if row["f16_err"] >= 0 else "%8s" % "-"
            gr = row["graph_us"] if row["graph_us"] >= 0 else nan
            print("%-4s %-4s %9.1f %9.1f %9.1f %7.2f %9.1f %8.2f %9.1f %9.2f %9.2f %7.1f%% %9.1f %7.1f%% %-13s %s" % (
                cid, dtype, o["us"], gr, t, row["ratio"], cdn, o["us"] / cdn, ccl, o["us"] / ccl, o["tflops"],
                row["ours_pct_floor"], fl, row["tv_pct_floor"], row["kernel"], err), flush=True)
    if cpu_cases:
        print("\nhost CPU: %s, %d logical CPUs, load average %s" % (cpu_model(), os.cpu_count() or 0, load_avg()),
              flush=True)
    try:
        sessions = ort_sessions(cpu_cases, a.threads)
    except Exception as e:
        print("onnxruntime setup failed: %r" % (e,), flush=True)
        sessions = {}
    rounds = []  # per round: ({case: ours us}, {case: ort us})
    for r in range(max(a.cpu_rounds, 1) if cpu_cases else 0):
        o = run_ours(a.bench, cpu_cases, a.iters, a.threads, "f32", ["--no-cuda"])
        try:
            t = bench_ort(sessions)
        except Exception as e:
            print("onnxruntime timing failed: %r" % (e,), flush=True)
            t = {}
        rounds.append(({k[0]: v["us"] for k, v in o.items() if k[1] == "cpu2"}, t))
        print("  round %d: %s" % (r + 1, "  ".join(
            "%s %.0f / %.0f" % (cid, rounds[-1][0][cid], t[cid]) for cid in cpu_cases
            if cid in rounds[-1][0] and cid in t)), flush=True)
    if cpu_cases:
        print("\nCPU, %d threads, %d rounds taking turns (us, medians; ratio = median over the rounds of "
              "onnxruntime / ours)" % (a.threads, len(rounds)))
        print("%-4s %11s %11s %7s %15s %9s" % ("case", "ours", "ort", "ratio", "ratio range", "GFLOP/s"))
    for cid in cpu_cases:
        pairs = [(o[cid], t[cid]) for o, t in rounds if cid in o and cid in t]
        if not pairs:
            continue
        ou = float(np.median([p[0] for p in pairs]))
        ru = float(np.median([p[1] for p in pairs]))
        ratios = [p[1] / p[0] for p in pairs]
        row = dict(case=cid, dtype="f32", device="cpu", ours_us=ou, ort_us=ru, ratio=float(np.median(ratios)),
                   ratio_min=min(ratios), ratio_max=max(ratios), rounds=pairs,
                   ours_gflops=gflop(CASES[cid]) / (ou * 1e-6))
        rows.append(row)
        print("%-4s %11.0f %11.0f %7.2f %7.2f - %5.2f %9.1f" % (cid, ou, ru, row["ratio"], min(ratios), max(ratios),
                                                              row["ours_gflops"]))
    if "tv_f16_err" in tv:
        e, m = tv["tv_f16_err"]
        print("\ntorchvision fp16 vs fp32 on the same fp16 inputs (case A, |y| up to %.2f): max abs err %.4f" % (m, e))
        rows.append(dict(tv_f16_max_abs_err=e, max_abs_y=m))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(dict(ours=list(ours.values()), rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
