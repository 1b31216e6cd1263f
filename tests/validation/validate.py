#!/usr/bin/env python3
"""Runs zerosim on every measured case of cases.json and tabulates prediction against
publication.

    validate.py ZEROSIM --write docs/VALIDATION.md   rewrite the results table in the doc
    validate.py ZEROSIM --check docs/VALIDATION.md   fail if the doc's table is out of date

Each case maps onto a zerosim run: a shipped or validation model preset, a DeepSpeed config
written from the case's training section (or --fsdp for FSDP cases), a platform resized to the
case's GPU count, the case's sequence length, activation checkpointing and attention kernels
(FlashAttention or the unfused softmax of the case's codebase). The metric is the
one the source published (TFLOP/s per GPU by Megatron's formula, tokens/s per GPU, MFU).
Only the table between the BEGIN/END markers of the doc is generated; the prose around it
(explanations of the errors) is written by hand.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BEGIN = "<!-- BEGIN validation table (tests/validation/validate.py --write) -->"
END = "<!-- END validation table -->"

# How each measured case becomes a zerosim run. The two DeepSpeed cases ran Megatron-style
# unfused attention (softmax over the materialised score matrix): the ZeRO-Offload paper (2021)
# predates FlashAttention (2022), which never supported the V100, and the Azure 175B run used
# Megatron-DeepSpeed's fused masked softmax. The FSDP codebases use fused attention
# (llm-foundry's flash attention, PyTorch's scaled_dot_product_attention).
CASES = {
    "azure-175b-zero3": dict(model="gpt3-175b", platform="dgx-a100-80g", seq=512,
                             recompute="full", flash="off"),
    "zero-offload-10b-v100": dict(model=os.path.join(HERE, "models", "gpt-10b-offload.json"),
                                  platform="dgx2-v100", seq=1024, recompute="full",
                                  offload="cpu", flash="off"),
    "foundry-70b-h100": dict(model="mpt-70b", platform="dgx-h100", seq=2048, recompute="full",
                             fsdp="FULL_SHARD"),
    "ibm-llama2-13b-a100": dict(model="llama-2-13b",
                                platform=os.path.join(HERE, "platforms", "a100-80g-400gbps.json"),
                                seq=4096, recompute="every:2", fsdp="HYBRID_SHARD"),
    "torchtitan-llama3-8b-a100": dict(model="llama-3-8b", platform="dgx-a100-80g", seq=8192,
                                      recompute="every:2", fsdp="FULL_SHARD"),
}
# The ZeRO++ baselines: DGX-2 nodes with 4 or 1 of their 100 Gb/s NICs in use, the tutorial's
# 18B GPT-2 and its ZeRO-3 bucket settings (Megatron-DeepSpeed: unfused softmax attention).
for _ib in (4, 1):
    for _k in (1, 2):
        CASES["zeropp-18b-v100-ib%d-%dk" % (_ib, _k)] = dict(
            model=os.path.join(HERE, "models", "gpt-18b-zeropp.json"),
            platform=os.path.join(HERE, "platforms", "dgx2-v100-%dx100g.json" % _ib), seq=512,
            recompute="full", flash="off",
            zero={"reduce_bucket_size": 10000000, "reduce_scatter": True,
                  "contiguous_gradients": True, "overlap_comm": True})


def ds_config(case, run):
    t = case["training"]
    cfg = {"train_micro_batch_size_per_gpu": t["micro_batch"],
           "gradient_accumulation_steps": t.get("grad_accum", 1),
           t["dtype"]: {"enabled": True},
           "zero_optimization": {"stage": t.get("zero_stage", 3)}}
    cfg["zero_optimization"].update(run.get("zero", {}))
    if run.get("offload"):
        cfg["zero_optimization"]["offload_optimizer"] = {"device": run["offload"],
                                                         "pin_memory": True}
    return cfg


def simulate(zerosim, case):
    run = CASES[case["id"]]
    gpus = case["cluster"]["gpus"]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(ds_config(case, run), f)
        config = f.name
    cmd = [zerosim, "run", "--model", run["model"], "--config", config,
           "--platform", run["platform"], "--gpus", str(gpus), "--seq-len", str(run["seq"]),
           "--activation-checkpointing", run["recompute"],
           "--flash-attention", run.get("flash", "on"), "--json", "-"]
    if run.get("fsdp"):
        cmd += ["--fsdp", run["fsdp"]]
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env=dict(os.environ, ZEROSIM_DATA_DIR=ROOT))
    os.unlink(config)
    if proc.returncode not in (0, 3):
        why = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"
        return None, why.replace(config, "(case config)")
    return json.loads(proc.stdout), None


def rows(zerosim):
    cases = json.load(open(os.path.join(HERE, "cases.json")))["measured"]
    out = []
    for case in cases:
        report, why = simulate(zerosim, case)
        for metric, published in case["result"].items():
            if not isinstance(published, (int, float)):
                continue
            if report is None:
                out.append((case["id"], metric, published, None, why))
                continue
            gpus = report["cluster"]["gpus"]
            t = report["throughput"]
            predicted = {"tflops_per_gpu": t["tflops_per_gpu"],
                         "tokens_per_s_per_gpu": t["tokens_per_s"] / gpus,
                         "mfu": t["mfu"]}[metric]
            out.append((case["id"], metric, published, predicted,
                        "fits" if report["memory"]["fits"] else "OUT OF MEMORY"))
    return out


def table(zerosim):
    lines = [BEGIN,
             "| case | metric | published | zerosim | error | note |",
             "|---|---|---|---|---|---|"]
    for cid, metric, published, predicted, note in rows(zerosim):
        if predicted is None:
            lines.append(f"| {cid} | {metric} | {published:g} | not simulated | - | {note} |")
            continue
        err = 100.0 * (predicted - published) / published
        lines.append(f"| {cid} | {metric} | {published:g} | {predicted:.4g} | {err:+.1f}% "
                     f"| {note} |")
    lines.append(END)
    return "\n".join(lines)


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("--write", "--check"):
        sys.exit(__doc__)
    zerosim, mode, doc = sys.argv[1:]
    text = open(doc).read() if os.path.exists(doc) else f"{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        sys.exit(f"{doc}: expected the validation table markers, got none")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    new = head + table(zerosim) + tail
    if mode == "--write":
        open(doc, "w").write(new)
        return
    if new != text:
        sys.exit(f"{doc}: the validation table is out of date; run "
                 f"`cmake --build build --target update-validation` and review the diff")


if __name__ == "__main__":
    main()
