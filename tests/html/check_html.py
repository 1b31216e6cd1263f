#!/usr/bin/env python3
"""The HTML reports of `zerosim run`, `compare` and `advise --html`, checked.

usage: check_html.py ZEROSIM SOURCE_DIR OUT_DIR              structure (always on)
       check_html.py ZEROSIM SOURCE_DIR OUT_DIR --render CHROMIUM
                                                             rendered in headless Chromium

Structure: each page is well-formed XML (every element closed, text escaped), has no script
and nothing loaded from outside (no src, no href but data:), and holds the parts it promises:
the run page a verdict, the breakdown bar, the memory-over-time area (one polygon per memory
category), the bytes per link class and the one-layer timeline (forward and backward lanes
with ops drawn); the compare page a column per configuration and its bars; the advise page
the ranked table with its recommendation and the charts.

Render: each page is screenshot by headless Chromium, which must log no console message (the
pages have no script, so any is an error) and produce a picture that is not blank (enough
non-white pixels, several colours). Two controls show the checks can fail: a page that logs
to the console and an empty page must be refused. Exits 77 (CTest's skip) without Chromium.
"""
import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("check_html: " + msg)
    sys.exit(1)


def make_pages(zerosim, src, out):
    env = dict(os.environ, ZEROSIM_DATA_DIR=src)
    run_page = os.path.join(out, "run.html")
    compare_page = os.path.join(out, "compare.html")
    # ZeRO-3 with CPU offload: compute, gathers, reductions and PCIe copies on the timeline
    subprocess.run([zerosim, "run", "--model", "gpt2-1.5b", "--config", "zero3-offload-cpu",
                    "--platform", "dgx-a100-80g", "--gpus", "8", "--seq-len", "1024",
                    "--html", run_page], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run([zerosim, "compare", "--model", "gpt2-1.5b", "--platform", "dgx-a100-80g",
                    "--gpus", "8", "--seq-len", "1024", "--config", "zero2", "--config",
                    "zero3", "--html", compare_page], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    advise_page = os.path.join(out, "advise.html")
    subprocess.run([zerosim, "advise", "--model", "gpt2-1.5b", "--platform", "dgx-a100-80g",
                    "--seq-len", "1024", "--max-micro-batch", "4", "--global-batch", "64",
                    "--html", advise_page], check=True, env=env, stdout=subprocess.DEVNULL)
    return run_page, compare_page, advise_page


def parse(path):
    text = open(path, encoding="utf-8").read()
    if not text.startswith("<!DOCTYPE html>"):
        fail(path + ": expected <!DOCTYPE html> first")
    if "<script" in text.lower():
        fail(path + ": expected no script, found one")
    try:
        root = ET.fromstring(text[len("<!DOCTYPE html>"):])
    except ET.ParseError as e:
        fail(path + ": expected well-formed markup, got " + str(e))
    for el in root.iter():
        for attr in ("src", "href"):
            v = el.get(attr)
            if v is not None and not v.startswith("data:"):
                fail(path + ": expected nothing loaded from outside, got %s=%r" % (attr, v))
    return root


def texts(root, tag):
    return ["".join(el.itertext()) for el in root.iter(tag)]


def check_run(path):
    root = parse(path)
    h2 = texts(root, "h2")
    for want in ("Verdict", "Where the step goes", "GPU memory over time", "Bytes sent",
                 "One layer's timeline"):
        if not any(h.startswith(want) for h in h2):
            fail(path + ": expected a section \"%s\", got %s" % (want, h2))
    if not any(p.startswith("fits:") for p in texts(root, "p")):
        fail(path + ": expected the verdict \"fits: ...\"")
    polygons = list(root.iter(SVG + "polygon"))
    if len(polygons) != 7:
        fail(path + ": expected 7 memory categories as polygons, got %d" % len(polygons))
    svgs = list(root.iter(SVG + "svg"))
    if len(svgs) < 6:  # breakdown, memory, 2 x bytes, forward, backward
        fail(path + ": expected at least 6 charts, got %d" % len(svgs))
    lanes = [t for s in svgs[-2:] for t in texts(s, SVG + "text")]
    for lane in ("compute", "gather", "h2d", "reduce"):
        if lane not in lanes:
            fail(path + ": expected a timeline lane \"%s\", got %s" % (lane, lanes))
    ops = [r for s in svgs[-2:] for r in s.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    if len(ops) < 4:
        fail(path + ": expected ops drawn on the timeline, got %d" % len(ops))


def check_compare(path):
    root = parse(path)
    heads = texts(root, "th")
    if "zero2" not in heads or "zero3" not in heads:
        fail(path + ": expected a column per configuration, got %s" % heads)
    svgs = list(root.iter(SVG + "svg"))
    if len(svgs) < 6:  # 2 breakdown, 2 memory, 2 bytes
        fail(path + ": expected at least 6 charts, got %d" % len(svgs))


def check_advise(path):
    root = parse(path)
    pre = texts(root, "pre")
    if not pre or "Recommended:" not in pre[0]:
        fail(path + ": expected the ranked table with its recommendation")
    svgs = list(root.iter(SVG + "svg"))
    if len(svgs) < 3:  # step time, tokens/s, memory
        fail(path + ": expected at least 3 charts, got %d" % len(svgs))


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(path + ": expected a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            if depth != 8 or color not in (2, 6):
                fail(path + ": expected 8-bit RGB(A), got depth %d colour %d" % (depth, color))
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def render(chromium, page, out):
    shot = page + ".png"
    if os.path.exists(shot):
        os.remove(shot)
    proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--window-size=1000,1400",
                           "--enable-logging=stderr", "--v=0", "--screenshot=" + shot,
                           "file://" + os.path.abspath(page)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                          cwd=out)
    log = proc.stderr.decode("utf-8", "replace")
    console = [l for l in log.splitlines() if ":CONSOLE" in l]
    if not os.path.exists(shot):
        return None, console, log
    w, h, bpp, rows = png_pixels(shot)
    colours, inked = set(), 0
    for row in rows[::4]:  # every fourth row and pixel is plenty
        for x in range(0, w * bpp, 4 * bpp):
            px = bytes(row[x:x + 3])
            colours.add(px)
            inked += px != b"\xff\xff\xff"
    sampled = (len(rows[::4])) * len(range(0, w * bpp, 4 * bpp))
    return (inked / sampled, len(colours)), console, log


def judge(page, result, console, log):
    """None when the page rendered with ink and colour and no console message, else why."""
    stats = result
    if stats is None:
        return "no screenshot was written:\n" + log[-2000:]
    if console:
        return "the page logged to the console: " + "; ".join(console)
    inked, colours = stats
    if inked < 0.01 or colours < 8:
        return "the screenshot is blank (%.2f%% non-white, %d colours)" % (100 * inked, colours)
    return None


def main():
    if len(sys.argv) not in (4, 6):
        fail(__doc__)
    zerosim, src, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    chromium = None
    if len(sys.argv) == 6:
        chromium = sys.argv[5]
        if not chromium or not os.path.exists(chromium):
            print("check_html: chromium not found: skipped")
            sys.exit(77)
    run_page, compare_page, advise_page = make_pages(zerosim, src, out)
    check_run(run_page)
    check_compare(compare_page)
    check_advise(advise_page)
    if chromium is None:
        print("check_html: the three pages well-formed with their parts")
        return
    for page in (run_page, compare_page, advise_page):
        why = judge(page, *render(chromium, page, out))
        if why:
            fail(page + ": " + why)
    # the controls: the checks must refuse a page with a console message and a blank page
    noisy = os.path.join(out, "control-console.html")
    open(noisy, "w").write("<!DOCTYPE html><html><body><p>x</p>"
                           "<script>console.error('control')</script></body></html>")
    blank = os.path.join(out, "control-blank.html")
    open(blank, "w").write("<!DOCTYPE html><html><body></body></html>")
    for page, what in ((noisy, "console"), (blank, "blank")):
        why = judge(page, *render(chromium, page, out))
        if why is None or what not in why:
            fail(page + ": expected the %s control to be refused, got %r" % (what, why))
    print("check_html: the three pages render in Chromium, not blank, no console messages")


main()
