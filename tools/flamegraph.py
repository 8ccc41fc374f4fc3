#!/usr/bin/env python3
"""A flame graph, as a self-contained SVG, from the text of `perf script`.

    perf script -i perf.data --no-inline | tools/flamegraph.py -o graph.svg --title "..."
    tools/flamegraph.py perf.txt --folded          # the folded stacks instead, one a line

Each sample's call chain (perf prints it innermost first) becomes a stack from the root,
outermost first; stacks with a common prefix share their frames. A frame's width is its
share of the samples, its tooltip (<title>) the count and percentage. Frames narrower
than --min-percent of the whole are left out with what they called. Python 3, stdlib only.
"""
import argparse
import html
import re
import sys
import zlib

ROW = 16  # pixels per frame
PAD_TOP = 34  # room for the title
CHAR_W = 6.5  # approximate width of a character at font-size 11


def read_stacks(lines):
    """Yields each sample's frame names, outermost first."""
    frames = []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                yield frames[::-1]
            frames = []
        elif line[0] in " \t":  # a frame: "  ADDRESS SYMBOL+0xOFF (DSO)"
            parts = line.split(None, 1)
            sym = parts[1] if len(parts) > 1 else parts[0]
            dso = re.search(r" \(([^()]*)\)$", sym)
            sym = re.sub(r" \([^()]*\)$", "", sym)
            sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
            if sym == "[unknown]" and dso and dso.group(1) != "[unknown]":
                sym = "[%s]" % dso.group(1).rsplit("/", 1)[-1]
            frames.append(sym)
        else:  # a sample's header: a new sample starts, even without a blank line
            if frames:
                yield frames[::-1]
            frames = []
    if frames:
        yield frames[::-1]


class Node:
    __slots__ = ("name", "count", "children")

    def __init__(self, name):
        self.name, self.count, self.children = name, 0, {}

    def add(self, stack):
        node = self
        node.count += 1
        for name in stack:
            node = node.children.setdefault(name, Node(name))
            node.count += 1


def short(name):
    """The name without template arguments, for the label (the tooltip has it whole)."""
    out, depth = [], 0
    for c in name:
        if c == "<":
            if depth == 0:
                out.append("<>")
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def color(name):
    # Stable per name, warm hues; the coroutine machinery and the kernel in their own.
    h = zlib.crc32(name.encode())
    if name.startswith("photon_") or "thread_stub" in name:
        return "rgb(120,%d,220)" % (150 + h % 60)
    return "rgb(%d,%d,%d)" % (205 + h % 50, 80 + (h >> 8) % 120, (h >> 16) % 55)


def layout(node, x, depth, min_count, out):
    """Appends (node, x in samples, depth) for node and its wide enough descendants."""
    out.append((node, x, depth))
    for child in sorted(node.children.values(), key=lambda n: n.name):
        if child.count >= min_count:
            layout(child, x, depth + 1, min_count, out)
        x += child.count


def svg(root, title, width, min_percent):
    total = max(root.count, 1)
    boxes = []
    layout(root, 0, 0, total * min_percent / 100.0, boxes)
    depth = max(d for _, _, d in boxes) + 1
    height = PAD_TOP + depth * ROW + 24
    scale = (width - 20) / total
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
        'viewBox="0 0 %d %d" font-family="monospace" font-size="11">'
        % (width, height, width, height),
        '<rect width="100%" height="100%" fill="#f8f8f0"/>',
        '<text x="%d" y="20" text-anchor="middle" font-size="15">%s</text>'
        % (width // 2, html.escape(title)),
        '<text x="10" y="%d" fill="#555">%d samples; frames under %.1f%% left out; '
        "hover for counts</text>" % (height - 8, root.count, min_percent),
    ]
    for node, x, d in boxes:
        w = node.count * scale
        y = PAD_TOP + (depth - 1 - d) * ROW  # the root at the bottom
        tip = "%s (%d samples, %.2f%%)" % (node.name, node.count, 100.0 * node.count / total)
        label = short(node.name)
        fit = int((w - 6) / CHAR_W)
        label = label if len(label) <= fit else (label[: fit - 2] + ".." if fit > 3 else "")
        out.append(
            '<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" '
            'rx="2" stroke="#f8f8f0" stroke-width="0.5"/>'
            % (html.escape(tip), 10 + x * scale, y, w, ROW - 1, color(node.name))
        )
        if label:
            out.append(
                '<text x="%.1f" y="%d">%s</text>' % (13 + x * scale, y + ROW - 4, html.escape(label))
            )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", nargs="?", help="perf script output (default: stdin)")
    ap.add_argument("-o", "--output", help="the SVG (default: stdout)")
    ap.add_argument("--title", default="Flame graph")
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--min-percent", type=float, default=0.5, help="narrowest frame kept")
    ap.add_argument("--folded", action="store_true", help="print folded stacks, not SVG")
    args = ap.parse_args()

    src = open(args.input, errors="replace") if args.input else sys.stdin
    root = Node("all")
    folded = {}
    for stack in read_stacks(src):
        root.add(stack)
        if args.folded:
            key = ";".join(stack)
            folded[key] = folded.get(key, 0) + 1
    text = (
        "".join("%s %d\n" % kv for kv in sorted(folded.items()))
        if args.folded
        else svg(root, args.title, args.width, args.min_percent)
    )
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
