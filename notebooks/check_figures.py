#!/usr/bin/env python3
"""check_figures.py - every figure a notebook's text names is drawn by that notebook, and was
drawn by this run.

    notebooks/check_figures.py [--since STAMP] NOTEBOOK.ipynb...

Without --since (CTest, no execution): in each notebook, every `figures/NAME.png` its markdown
names is saved by a `savefig(fig, "NAME")` call in its code, and every figure its code saves is
named in its markdown (so that the text describes each figure). With --since STAMP (run_all.sh,
after executing the notebooks): each named figure's file also exists and is newer than STAMP,
a file touched before the run, so a figure the run no longer draws is caught even though an
old PNG is still on disk. Standard library only: it reads the .ipynb files as JSON.
Exit 0 when every check holds, 1 with one line per failure otherwise.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIGURES = os.path.join(HERE, "figures")
REFERENCE = re.compile(r"figures/([A-Za-z0-9_.-]+)\.png")
SAVEFIG = re.compile(r"savefig\(\s*\w+\s*,\s*([^)]*)\)")
LITERAL = re.compile(r'^"([A-Za-z0-9_.-]+)"$')


def cells(path, kind):
    with open(path) as f:
        nb = json.load(f)
    for cell in nb["cells"]:
        if cell["cell_type"] == kind:
            src = cell["source"]
            yield src if isinstance(src, str) else "".join(src)


def check(path, since):
    name = os.path.basename(path)
    problems = []
    named = set()
    for text in cells(path, "markdown"):
        named.update(REFERENCE.findall(text))
    saved = set()
    for code in cells(path, "code"):
        for arg in SAVEFIG.findall(code):
            m = LITERAL.match(arg.strip())
            if m is None:
                problems.append(f"{name}: savefig: expected a literal figure name, got {arg!r}")
            else:
                saved.add(m.group(1))
    for fig in sorted(named - saved):
        problems.append(f"{name}: its text names figures/{fig}.png, which none of its cells saves")
    for fig in sorted(saved - named):
        problems.append(f"{name}: it saves figures/{fig}.png, which its text does not name "
                        "(describe each figure)")
    if since is not None:
        for fig in sorted(named & saved):
            png = os.path.join(FIGURES, fig + ".png")
            if not os.path.exists(png):
                problems.append(f"{name}: figures/{fig}.png: expected a file, got none")
            elif os.path.getmtime(png) < since:
                problems.append(f"{name}: figures/{fig}.png: expected it redrawn by this run, "
                                "got a file older than the run")
    if not named:
        problems.append(f"{name}: expected its text to name its figures, got none")
    return problems


def main(argv):
    since = None
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--since":
        since = os.path.getmtime(args[1])
        args = args[2:]
    if not args or any(a.startswith("-") for a in args):
        print("usage: check_figures.py [--since STAMP] NOTEBOOK.ipynb...", file=sys.stderr)
        return 2
    problems = [p for path in args for p in check(path, since)]
    for p in problems:
        print(f"check_figures: {p}", file=sys.stderr)
    if not problems:
        print(f"check_figures: {len(args)} notebooks: every figure named is drawn"
              + (" and was redrawn by this run" if since is not None else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
