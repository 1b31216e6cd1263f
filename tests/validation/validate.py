#!/usr/bin/env python3
"""Runs zerosim on every measured case of cases.json and tabulates prediction against
publication.

    validate.py ZEROSIM --write docs/VALIDATION.md   rewrite the results table in the doc
    validate.py ZEROSIM --check docs/VALIDATION.md   fail if the doc's table is out of date,
                                                     or a case's |error| exceeds its budget

Each case's "run" section in cases.json says how it becomes a zerosim run: the model (a shipped
preset "model", a file "model_file" under tests/validation/, or an inline HuggingFace config
"model_mpt"), the platform (shipped "platform" or "platform_file" under tests/validation/),
resized to the case's GPU count, the sequence length, activation checkpointing, FSDP strategy,
expert parallelism ("ep_size"), the simulation mode ("mode"), the DeepSpeed release whose
ZeRO-3 ran ("deepspeed_version"), the NCCL release where the source names it ("nccl_version",
run as a temporary copy of the platform file with nccl.version set, which selects NCCL's
tuner constants and memory; the shipped platform files are not touched), the CUDA module
loading of its software stack
("cuda_module_loading": eager before CUDA 11.7 and PyTorch 1.13), optimizer offload and attention kernels (FlashAttention,
or "flash": "off" for the unfused softmax of the case's codebase), and the element-wise kernels
("elementwise": "eager" for HF transformers' modeling code run op by op, else fused). A DeepSpeed config is
written from the training section. The metric is the one the source published (TFLOP/s per
GPU by Megatron's formula, tokens/s per GPU, MFU, samples/s of the whole job). Each case has an error budget
("budget_pct", the |error| --check allows): the target of 10%, or, for a case the model does
not yet reach, its present error with the reason in "budget_reason", so that a change that
makes any case worse fails CI. Verdict cases
("verdicts") compare the fits/out-of-memory outcome, run with --headroom 0, and show the
allocated and device peaks; reserved-peak cases ("reserved_peaks") compare the simulated
caching-allocator reserve with the published torch.cuda max reserved memory, under each of
the checkpointing modes their "run" lists. Allocated-peak cases ("allocated_peaks") compare the simulated
allocated peak with a published torch.cuda.max_memory_allocated (DeepSpeed's MaxMemAllocated). Only the table
between the BEGIN/END markers of the doc is generated; the prose around it (explanations of
the errors) is written by hand.
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

def ds_config(case, run):
    t = case["training"]
    cfg = {"train_micro_batch_size_per_gpu": t["micro_batch"],
           "gradient_accumulation_steps": t.get("grad_accum", 1),
           t["dtype"]: {"enabled": True},
           "zero_optimization": {"stage": t.get("zero_stage", 3)}}
    if run.get("offload"):
        cfg["zero_optimization"]["offload_optimizer"] = {"device": run["offload"],
                                                         "pin_memory": True}
    cfg["zero_optimization"].update(run.get("zero", {}))
    if run.get("communication_data_type"):  # FSDP's reduce_dtype, or DeepSpeed's own key
        cfg["communication_data_type"] = run["communication_data_type"]
    return cfg


def temp_json(obj):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(obj, f)
        return f.name


def simulate(zerosim, case, extra=(), recompute=None):
    run = dict(case["run"])
    if recompute is not None:
        run["recompute"] = recompute
    gpus = case["cluster"]["gpus"]
    config = temp_json(ds_config(case, run))
    temps = [config]
    if "model_mpt" in run:
        model = temp_json(run["model_mpt"])
        temps.append(model)
    elif "model_file" in run:
        model = os.path.join(HERE, run["model_file"])
    else:
        model = run["model"]
    platform = (os.path.join(HERE, run["platform_file"]) if "platform_file" in run
                else run["platform"])
    if run.get("nccl_version"):  # the NCCL release the source ran: a temporary platform copy
        with open(platform if "platform_file" in run
                  else os.path.join(ROOT, "platforms", platform + ".json")) as f:
            pf = json.load(f)
        pf["nccl"]["version"] = run["nccl_version"]
        platform = temp_json(pf)
        temps.append(platform)
    cmd = [zerosim, "run", "--model", model, "--config", config,
           "--platform", platform, "--gpus", str(gpus), "--seq-len", str(run["seq"]),
           "--activation-checkpointing", run["recompute"],
           "--flash-attention", run.get("flash", "on"),
           "--cross-entropy", run.get("cross_entropy", "eager"), "--json", "-", *extra]
    if run.get("fsdp"):
        cmd += ["--fsdp", run["fsdp"]]
    if run.get("fsdp_version"):  # FSDP2 (fully_shard) copies per-parameter shards
        cmd += ["--fsdp-version", str(run["fsdp_version"])]
    if run.get("fsdp_param_dtype"):  # FSDP's MixedPrecision.param_dtype
        cmd += ["--fsdp-param-dtype", run["fsdp_param_dtype"]]
    if run.get("elementwise"):  # the model code's element-wise kernels (HF eager, fused)
        cmd += ["--elementwise", run["elementwise"]]
    if run.get("ep_size"):  # expert parallelism of a mixture of experts
        cmd += ["--ep-size", str(run["ep_size"])]
    if run.get("mode"):  # symmetric mode for thousands of GPUs
        cmd += ["--mode", run["mode"]]
    if run.get("deepspeed_version"):  # the DeepSpeed release of a historical ZeRO-3 run
        cmd += ["--deepspeed-version", run["deepspeed_version"]]
    if run.get("zero_init"):  # off: a ZeRO-3 model built whole, then partitioned
        cmd += ["--zero-init", run["zero_init"]]
    if run.get("cuda_module_loading"):  # eager: a stack before CUDA 11.7 and PyTorch 1.13
        cmd += ["--cuda-module-loading", run["cuda_module_loading"]]
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env=dict(os.environ, ZEROSIM_DATA_DIR=ROOT))
    for t in temps:
        os.unlink(t)
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
            budget = case["budget_pct"]
            if report is None:
                out.append((case["id"], metric, published, None, why, budget))
                continue
            gpus = report["cluster"]["gpus"]
            t = report["throughput"]
            predicted = {"tflops_per_gpu": t["tflops_per_gpu"],
                         "tokens_per_s_per_gpu": t["tokens_per_s"] / gpus,
                         "mfu": t["mfu"],
                         "samples_per_s": t["tokens_per_s"] / case["run"]["seq"]}[metric]
            out.append((case["id"], metric, published, predicted,
                        "fits" if report["memory"]["fits"] else "OUT OF MEMORY", budget))
    return out


def gib(x):
    return x / 2**30


def verdict_rows(zerosim):
    cases = json.load(open(os.path.join(HERE, "cases.json")))["verdicts"]
    out = []
    for case in cases:
        report, why = simulate(zerosim, case, ("--headroom", "0"))
        published = "fits" if case["result"]["fits"] else "out of memory"
        if report is None:
            out.append(f"| {case['id']} | {published} | not simulated | - | - | - | {why} |")
            continue
        m = report["memory"]
        predicted = "fits" if m["fits"] else "out of memory"
        right = "right" if m["fits"] == case["result"]["fits"] else "**wrong**"
        out.append(f"| {case['id']} | {published} | {predicted} | {right} "
                   f"| {gib(m['gpu_peak_bytes']):.1f} | {gib(m['gpu_device_peak_bytes']):.1f} "
                   f"| {gib(m['gpu_capacity_bytes']):.1f} |")
    return out


def reserved_rows(zerosim):
    cases = json.load(open(os.path.join(HERE, "cases.json")))["reserved_peaks"]
    out = []
    for case in cases:
        published = case["result"]["reserved_peak_gib"]
        for recompute in case["run"]["recompute"]:
            report, why = simulate(zerosim, case, ("--headroom", "0"), recompute)
            if report is None:
                out.append(f"| {case['id']} | {recompute} | {published:g} | not simulated | - | {why} |")
                continue
            m = report["memory"]
            got = gib(m["gpu_reserved_peak_bytes"])
            err = 100.0 * (got - published) / published
            out.append(f"| {case['id']} | {recompute} | {published:g} | {got:.1f} | {err:+.1f}% "
                       f"| {'fits' if m['fits'] else 'OUT OF MEMORY'} |")
    return out


def allocated_rows(zerosim):
    cases = json.load(open(os.path.join(HERE, "cases.json"))).get("allocated_peaks", [])
    out = []
    for case in cases:
        published = case["result"]["allocated_peak_gib"]
        report, why = simulate(zerosim, case, ("--headroom", "0"))
        if report is None:
            out.append(f"| {case['id']} | {published:g} | not simulated | {why} |")
            continue
        got = gib(report["memory"]["gpu_peak_bytes"])
        err = 100.0 * (got - published) / published
        out.append(f"| {case['id']} | {published:g} | {got:.2f} | {err:+.1f}% |")
    return out


def error_pct(published, predicted):
    return 100.0 * (predicted - published) / published


def table(zerosim, results):
    lines = [BEGIN,
             "| case | metric | published | zerosim | error | budget | note |",
             "|---|---|---|---|---|---|---|"]
    for cid, metric, published, predicted, note, budget in results:
        if predicted is None:
            lines.append(f"| {cid} | {metric} | {published:g} | not simulated | - "
                         f"| {budget:g}% | {note} |")
            continue
        err = error_pct(published, predicted)
        lines.append(f"| {cid} | {metric} | {published:g} | {predicted:.4g} | {err:+.1f}% "
                     f"| {budget:g}% | {note} |")
    errs = [abs(error_pct(p, q)) for _, m, p, q, _, _ in results if q is not None]
    cases = {r[0] for r in results}
    if errs:
        lines.append("")
        lines.append(f"{len(cases)} cases, {len(errs)} rows: mean |error| {sum(errs) / len(errs):.1f}%, "
                     f"largest {max(errs):.1f}%, {sum(e <= 10.0 for e in errs)} of {len(errs)} "
                     f"rows within 10%.")
    lines += ["",
              "| verdict case | published | zerosim (--headroom 0) | verdict | allocated peak GiB "
              "| device peak GiB | HBM GiB |",
              "|---|---|---|---|---|---|---|"]
    lines += verdict_rows(zerosim)
    lines += ["",
              "| reserved-peak case | checkpointing run | published GiB | zerosim reserved GiB "
              "| error | verdict |",
              "|---|---|---|---|---|---|"]
    lines += reserved_rows(zerosim)
    lines += ["",
              "| allocated-peak case | published GiB | zerosim allocated GiB | error |",
              "|---|---|---|---|"]
    lines += allocated_rows(zerosim)
    lines.append(END)
    return "\n".join(lines)


def over_budget(results):
    """Rows whose |error| exceeds the case's budget, or that could not be simulated."""
    bad = []
    for cid, metric, published, predicted, note, budget in results:
        if predicted is None:
            bad.append(f"{cid} {metric}: not simulated ({note})")
        elif abs(error_pct(published, predicted)) > budget:
            bad.append(f"{cid} {metric}: error {error_pct(published, predicted):+.1f}% "
                       f"exceeds its budget of {budget:g}%")
    return bad


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("--write", "--check"):
        sys.exit(__doc__)
    zerosim, mode, doc = sys.argv[1:]
    text = open(doc).read() if os.path.exists(doc) else f"{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        sys.exit(f"{doc}: expected the validation table markers, got none")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    results = rows(zerosim)
    new = head + table(zerosim, results) + tail
    if mode == "--write":
        open(doc, "w").write(new)
        return
    failures = over_budget(results)
    if new != text:
        failures.append(f"{doc}: the validation table is out of date; run "
                        f"`cmake --build build --target update-validation` and review the diff")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
