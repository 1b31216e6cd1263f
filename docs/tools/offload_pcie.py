#!/usr/bin/env python3
"""Step time of ZeRO-Offload against PCIe bandwidth: the table in docs/OFFLOAD.md.

    docs/tools/offload_pcie.py build/zerosim

Runs the ZeRO-Offload paper's 10B GPT (tests/validation/models/gpt-10b-offload.json) with
ZeRO-2 and the optimizer on the CPU, on one GPU of dgx2-v100 and dgx-a100-80g, with each GPU's
PCIe link (and the switch uplink) set to a range of bandwidths, and prints a Markdown table of
the step time and where it goes. Without and with the delayed parameter update.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "tests", "validation", "models", "gpt-10b-offload.json")
CONFIG = {"train_micro_batch_size_per_gpu": 10, "fp16": {"enabled": True},
          "zero_optimization": {"stage": 2,
                                "offload_optimizer": {"device": "cpu", "pin_memory": True}}}
BANDWIDTHS_GB = [4, 8, 12, 16, 24, 32, 64]


def run(zerosim, platform, bw, delayed):
    p = json.load(open(os.path.join(ROOT, "platforms", platform + ".json")))
    p["pcie"]["gpu_link"]["bw_bytes_per_s"] = bw * 1e9
    p["pcie"]["switch_uplink"]["bw_bytes_per_s"] = max(bw * 1e9,
                                                       p["pcie"]["switch_uplink"]["bw_bytes_per_s"])
    with tempfile.TemporaryDirectory() as tmp:
        pf, cf = os.path.join(tmp, "p.json"), os.path.join(tmp, "c.json")
        json.dump(p, open(pf, "w"))
        json.dump(CONFIG, open(cf, "w"))
        cmd = [zerosim, "run", "--model", MODEL, "--config", cf, "--platform", pf, "--gpus", "1",
               "--seq-len", "1024", "--activation-checkpointing", "full", "--json", "-",
               "--steps", "3"]
        if delayed:
            cmd.append("--delayed-param-update")
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    zerosim = sys.argv[1]
    print("| GPU | PCIe GB/s | DPU | step s | compute s | exposed H2D s | exposed D2H s "
          "| exposed CPU Adam s | TFLOP/s per GPU |")
    print("|---|---|---|---|---|---|---|---|---|")
    for platform, gpu in (("dgx2-v100", "V100"), ("dgx-a100-80g", "A100")):
        for delayed in (False, True):
            for bw in BANDWIDTHS_GB:
                r = run(zerosim, platform, bw, delayed)
                t = r["time"]
                print(f"| {gpu} | {bw} | {'on' if delayed else 'off'} | {t['step_s']:.2f} "
                      f"| {t['compute_s']:.2f} | {t['exposed_h2d_s']:.2f} "
                      f"| {t['exposed_d2h_s']:.2f} | {t['exposed_cpu_optimizer_s']:.2f} "
                      f"| {r['throughput']['tflops_per_gpu']:.1f} |")


if __name__ == "__main__":
    main()
