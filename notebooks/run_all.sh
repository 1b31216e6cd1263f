#!/bin/sh
# Executes every notebook in this folder headless, with Debian's python3 and nbconvert, and
# fails on the first cell that raises. The executed copies go to a temporary folder, so the
# committed notebooks stay as they are; with --update they replace them (outputs included,
# so that readers see the figures without running anything). Either way the notebooks write
# their figures to notebooks/figures/, and check_figures.py then checks that every figure a
# notebook's text names was drawn by it in this run.
#
#   notebooks/run_all.sh [--update]
#
# Needs: build/zerosim (or ZEROSIM=path), and the Debian packages jupyter-nbconvert,
# python3-nbclient, python3-ipykernel, python3-matplotlib, python3-pandas.
# Environment: ZEROSIM (the executable), NB_PYTHON (default /usr/bin/python3),
# NB_TIMEOUT (seconds per cell, default 300).
set -eu
cd "$(dirname "$0")"

update=0
case "${1:-}" in
"") ;;
--update) update=1 ;;
*) echo "usage: notebooks/run_all.sh [--update]" >&2; exit 2 ;;
esac

PY=${NB_PYTHON:-/usr/bin/python3}
export ZEROSIM="${ZEROSIM:-$(cd .. && pwd)/build/zerosim}"
if [ ! -x "$ZEROSIM" ]; then
    echo "run_all.sh: $ZEROSIM not found: build first (cmake -S . -B build && cmake --build build)" >&2
    exit 1
fi

# The kernel named python3 must be a python that has the notebooks' packages: Debian's
# /usr/share/jupyter/kernels/python3 runs /usr/bin/python3. A python3 kernelspec of another
# interpreter (a pyenv or virtualenv one in ~/.local/share/jupyter) would shadow it.
export PYDEVD_DISABLE_FILE_VALIDATION=1 # quiets debugpy's frozen-modules notice
kernel=$("$PY" -c 'from jupyter_client.kernelspec import KernelSpecManager as K
print(K().get_kernel_spec("python3").argv[0])' 2>/dev/null) || kernel="(none: is jupyter-nbconvert installed for $PY?)"
if ! "$kernel" -c 'import ipykernel, matplotlib, numpy, pandas' 2>/dev/null; then
    echo "run_all.sh: the python3 kernel runs $kernel, which lacks ipykernel, matplotlib," \
        "numpy or pandas; install python3-ipykernel python3-matplotlib python3-pandas" >&2
    exit 1
fi
echo "kernel python3: $kernel; zerosim: $ZEROSIM"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM
unset MPLBACKEND # the kernel's default, inline, embeds the figures in the notebooks

elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%5.1f s", b - a }'; }

status=0
stamp="$out/stamp" # figures older than this were not redrawn by this run
touch "$stamp"
total_start=$(date +%s.%N)
for nb in [0-9][0-9]_*.ipynb; do
    start=$(date +%s.%N)
    if "$PY" -m nbconvert --to notebook --execute --output-dir "$out" \
        --ExecutePreprocessor.kernel_name=python3 \
        --ExecutePreprocessor.timeout="${NB_TIMEOUT:-300}" \
        --ExecutePreprocessor.record_timing=False \
        "$nb" >"$out/$nb.log" 2>&1; then
        echo "$nb ok $(elapsed "$start")"
        [ "$update" = 1 ] && cp "$out/$nb" "$nb"
    else
        echo "$nb FAILED after $(elapsed "$start"):"
        grep -v 'frozen\|debugger\|Debugging' "$out/$nb.log" | tail -40 >&2
        status=1
    fi
done
# every figure a notebook's text names is drawn by it, and was redrawn by this run
if [ "$status" = 0 ] && ! "$PY" check_figures.py --since "$stamp" [0-9][0-9]_*.ipynb; then
    status=1
fi
echo "all notebooks: $(elapsed "$total_start")"
exit $status
