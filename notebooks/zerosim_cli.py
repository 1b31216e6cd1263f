"""zerosim_cli - run the zerosim executable from a notebook and read its JSON output.

The notebooks in this folder call zerosim as a user would, through its command line, and read
only what it writes (JSON reports, Chrome traces): nothing here imports simulator internals.

    ZEROSIM           the executable (default: ../build/zerosim, relative to this folder)
    ZEROSIM_DATA_DIR  where shipped model, config and platform names are found (default: the
                      repository holding this folder)

Figures go to figures/ beside this file.
"""
import json
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIGURES = os.path.join(HERE, "figures")
ZEROSIM = os.path.abspath(os.environ.get("ZEROSIM", os.path.join(ROOT, "build", "zerosim")))
DATA_DIR = os.environ.get("ZEROSIM_DATA_DIR", ROOT)

# zerosim's exit codes (README): 0 success, 3 `run` ran out of memory (the report is complete).
EXIT_OK, EXIT_OOM = 0, 3


def zerosim(*args, allow_oom=False):
    """Runs `zerosim ARGS --json -` and returns the parsed report.

    With allow_oom, exit code 3 (a simulated run that does not fit) also returns the report:
    its memory section says what ran out. Any other failure raises with zerosim's stderr.
    """
    cmd = [ZEROSIM, *map(str, args), "--json", "-"]
    env = dict(os.environ, ZEROSIM_DATA_DIR=DATA_DIR)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode == EXIT_OK or (allow_oom and p.returncode == EXIT_OOM):
        return json.loads(p.stdout)
    raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr.strip()}")


def zerosim_text(*args):
    """Runs zerosim and returns its text report (stdout); raises on a non-zero exit."""
    cmd = [ZEROSIM, *map(str, args)]
    env = dict(os.environ, ZEROSIM_DATA_DIR=DATA_DIR)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != EXIT_OK:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr.strip()}")
    return p.stdout


def version():
    """"zerosim 0.1.0 (build/zerosim)": the version and the executable used, for the record."""
    if not os.access(ZEROSIM, os.X_OK):
        raise RuntimeError(f"{ZEROSIM}: no such executable: build zerosim first "
                           "(cmake -S . -B build && cmake --build build) or set ZEROSIM")
    p = subprocess.run([ZEROSIM, "--version"], capture_output=True, text=True)
    if p.returncode != EXIT_OK:
        raise RuntimeError(f"{ZEROSIM} --version: exit {p.returncode}\n{p.stderr.strip()}")
    return f"{p.stdout.strip()} ({shown(ZEROSIM)})"


def shown(path):
    """path relative to the repository when inside it (stable across checkouts), else as is."""
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def data_file(*parts):
    """A path inside the repository (platforms/, workloads/, tests/validation/...)."""
    return os.path.join(DATA_DIR, *parts)


def write_json(path, obj):
    """Writes obj as JSON to path and returns path: custom models, configs and platforms."""
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)
    return path


def read_json(path):
    with open(path) as f:
        return json.load(f)


def savefig(fig, name):
    """Saves fig as figures/NAME.png (deterministic bytes: no software or date stamp)."""
    os.makedirs(FIGURES, exist_ok=True)
    path = os.path.join(FIGURES, name + ".png")
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    return path


GB = 1e9        # the ZeRO paper's tables count GB = 10^9 bytes
GIB = 2 ** 30   # HBM capacities are GiB
