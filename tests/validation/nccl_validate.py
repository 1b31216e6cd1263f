#!/usr/bin/env python3
"""Compares `zerosim collective` with the published NCCL figures of nccl/points.json.

    nccl_validate.py ZEROSIM --write docs/COLLECTIVES.md   rewrite the comparison table
    nccl_validate.py ZEROSIM --check docs/COLLECTIVES.md   fail if the table is out of date
    nccl_validate.py ZEROSIM --plot DIR                    draw the curves (needs matplotlib)

Each point runs the shipped platform (or a platform file of the repository, for a machine
no shipped platform describes) resized to the point's GPUs, at the point's nccl-tests
size, with NCCL's own choice of algorithm and protocol unless the source restricted it
(NCCL_ALGO=RING becomes --algo ring, NCCL_ALGO=NVLSTree --algo nvls_tree), under the NCCL
release the source ran ("nccl_version": a temporary copy of the platform file with
nccl.version set; the shipped files are not touched; without it the platform's default).
The error is (zerosim - published) / published on the
published quantity (bus bandwidth, or time for small messages). The bound is 5% for large
messages (1 GiB and above) and 15% otherwise; the table says which points are within it.
Only the table between the BEGIN/END markers is generated; the prose is written by hand.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
POINTS = os.path.join(HERE, "nccl", "points.json")
BEGIN = "<!-- BEGIN nccl-tests table (tests/validation/nccl_validate.py --write) -->"
END = "<!-- END nccl-tests table -->"


ROOT = os.path.dirname(os.path.dirname(HERE))


def platform_file(platform):
    if "/" in platform:  # a platform file of the repository (tests/validation/platforms/)
        return os.path.join(ROOT, platform)
    return os.path.join(ROOT, "platforms", platform + ".json")


def run(zerosim, platform, gpus, op, min_bytes, max_bytes, algo=None, nccl_version=None):
    path, tmp = platform_file(platform), None
    if nccl_version:  # the source's NCCL release: a temporary copy with nccl.version set
        with open(path) as f:
            pf = json.load(f)
        pf["nccl"]["version"] = nccl_version
        fd, tmp = tempfile.mkstemp(suffix=".json", prefix="nccl-%s-" % nccl_version)
        with os.fdopen(fd, "w") as f:
            json.dump(pf, f)
        path = tmp
    cmd = [zerosim, "collective", "--platform", path, "--gpus", str(gpus), "--op", op,
           "--min-bytes", str(min_bytes), "--max-bytes", str(max_bytes), "--json", "-"]
    if algo:
        cmd += ["--algo", algo]
    try:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    finally:
        if tmp:
            os.unlink(tmp)
    return json.loads(out)


def rows(zerosim):
    with open(POINTS) as f:
        points = json.load(f)["points"]
    out = []
    for p in points:
        r = run(zerosim, p["platform"], p["gpus"], p["op"], p["bytes"], p["bytes"],
                p.get("algo"), p.get("nccl_version"))[0]
        if "busbw_GBps" in p:
            published, got, unit = p["busbw_GBps"], r["busbw_bytes_per_s"] / 1e9, "busbw GB/s"
        else:
            published, got, unit = p["time_us"], r["time_s"] * 1e6, "time us"
        err = (got - published) / published
        bound = 0.05 if p["large"] else 0.15
        out.append(dict(p, published=published, got=got, unit=unit, err=err, bound=bound,
                        ran="%s/%s" % (r["algo"], r["proto"])))
    return out


def size_text(n):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d B" % n


def table(zerosim):
    lines = ["| point | op | GPUs | size | NCCL_ALGO | NCCL | published | zerosim (ran) | error | "
             "bound | kind, source |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows(zerosim):
        within = "yes" if abs(r["err"]) <= r["bound"] else "**no**"
        lines.append("| %s | %s | %d | %s | %s | %s | %g %s | %.4g (%s) | %+.1f%% | %d%%: %s "
                     "| %s: %s |"
                     % (r["id"], r["op"], r["gpus"], size_text(r["bytes"]),
                        r.get("algo", "default"), r.get("nccl_version", "default"),
                        r["published"], r["unit"], r["got"], r["ran"],
                        100 * r["err"], round(100 * r["bound"]), within, r["kind"],
                        r["source"]))
    return "\n".join(lines) + "\n"


def plot(zerosim, out_dir):
    """One figure per platform: bus bandwidth (left) and time (right, log-log) against the
    message size, zerosim's curves as lines and the published points as crosses, each point
    in the panel of the unit it was published in and named by its id."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with open(POINTS) as f:
        points = json.load(f)["points"]
    curves = [("dgx-a100-80g", 8, "all_reduce", None, None),
              ("dgx-a100-80g", 16, "all_reduce", None, None),
              ("dgx-a100-80g", 64, "all_reduce", None, None),
              ("dgx-a100-80g", 1024, "all_gather", None, None),
              ("dgx-a100-80g", 16, "all_reduce", "ring", None),
              ("dgx-h100", 8, "all_reduce", None, None), ("dgx-h100", 8, "all_reduce", "ring", None),
              ("dgx-h100", 8, "all_gather", None, None), ("dgx-h100", 16, "all_reduce", None, None),
              ("dgx-h100", 16, "all_reduce", "ring", None),
              ("dgx-h100", 16, "all_reduce", "nvls_tree", None),
              ("dgx-h100", 16, "all_reduce", "nvls_tree", "2.21.5")]
    os.makedirs(out_dir, exist_ok=True)
    for platform in ("dgx-a100-80g", "dgx-h100"):
        fig, (bw, tm) = plt.subplots(1, 2, figsize=(11, 4.4))
        for (pf, gpus, op, algo, version) in curves:
            if pf != platform:
                continue
            rs = run(zerosim, pf, gpus, op, 8, 16 << 30, algo, version)
            label = "%s, %d GPUs%s%s" % (op, gpus, ", NCCL_ALGO=%s" % algo if algo else "",
                                         ", NCCL %s" % version if version else "")
            line, = bw.plot([r["bytes"] for r in rs],
                            [r["busbw_bytes_per_s"] / 1e9 for r in rs], label=label)
            tm.plot([r["bytes"] for r in rs], [r["time_s"] * 1e6 for r in rs],
                    color=line.get_color(), label=label)
        k = 0
        for p in points:
            if p["platform"] != platform:
                continue
            ax, y = (bw, p["busbw_GBps"]) if "busbw_GBps" in p else (tm, p["time_us"])
            ax.scatter([p["bytes"]], [y], marker="x", color="black", zorder=3)
            ax.annotate("%s (%d GPUs)" % (p["id"], p["gpus"]), (p["bytes"], y), fontsize=6,
                        textcoords="offset points", xytext=(-95, -12 - 9 * (k % 4)),
                        arrowprops=dict(arrowstyle="-", lw=0.4, color="gray"))
            k += 1
        for ax in (bw, tm):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
            ax.grid(True, which="both", alpha=0.3)
        tm.set_yscale("log")
        bw.set_ylabel("bus bandwidth (GB/s)")
        tm.set_ylabel("time (us)")
        bw.legend(fontsize=7, loc="upper left")
        fig.suptitle("%s: zerosim collective (lines) and published nccl-tests figures (x)"
                     % platform)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "collectives-%s.png" % platform), dpi=100)
        plt.close(fig)


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("--write", "--check", "--plot"):
        sys.exit("usage: nccl_validate.py ZEROSIM --write|--check DOC | --plot DIR")
    zerosim, mode, path = sys.argv[1:]
    if mode == "--plot":
        plot(zerosim, path)
        return
    with open(path) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        sys.exit("%s: expected the markers %s ... %s" % (path, BEGIN, END))
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + BEGIN + "\n" + table(zerosim) + END + tail
    if mode == "--write":
        with open(path, "w") as f:
            f.write(new)
    elif new != doc:
        sys.exit("%s: the nccl-tests table is out of date; run cmake --build build --target "
                 "update-validation and review the diff" % path)


if __name__ == "__main__":
    main()
