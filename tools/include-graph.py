#!/usr/bin/env python3
"""Draws the includes between the floors of tools/floors.txt, as DOT text on stdout.

One node per floor (with its number of files), one edge per pair of floors that an include
joins (labelled with the number of includes); includes within a floor are not drawn. Upward
or sideways edges (only allowlisted ones can exist while tools/check-floors.py passes) are
red and dashed. A summary goes to stderr: the arrows per pair, lowest includer first.
    tools/include-graph.py | dot -Tsvg > floors.svg
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import floors  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=floors.ROOT, help="the repository (default: this one)")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    table = floors.Table(os.path.join(root, "tools", "floors.txt"))
    files = floors.library_files(root)
    per_floor = {}
    arrows = {}  # (includer floor, target floor) -> count
    for rel in files:
        mine = table.floor_of(rel)
        per_floor[mine] = per_floor.get(mine, 0) + 1
        for _, _, target in floors.includes(rel, root):
            theirs = table.floor_of(target) if target else None
            if mine is None or theirs is None or theirs == mine:
                continue
            arrows[(mine, theirs)] = arrows.get((mine, theirs), 0) + 1

    out = ["digraph floors {", "  rankdir=BT;", '  node [shape=box, fontname="sans"];']
    for fl in table.floors:
        out.append('  "%s" [label="%s\\n%d files"];' % (fl, fl, per_floor.get(fl, 0)))
    for (a, b), n in sorted(arrows.items(), key=lambda kv: (table.rank(kv[0][0]),
                                                             table.rank(kv[0][1]))):
        style = "" if table.may_include(a, b) else ", color=red, style=dashed"
        out.append('  "%s" -> "%s" [label="%d"%s];' % (a, b, n, style))
    out.append("}")
    print("\n".join(out))

    down = sum(n for (a, b), n in arrows.items() if table.may_include(a, b))
    up = sum(n for (a, b), n in arrows.items() if not table.may_include(a, b))
    for (a, b), n in sorted(arrows.items(), key=lambda kv: (table.rank(kv[0][0]),
                                                             table.rank(kv[0][1]))):
        mark = "" if table.may_include(a, b) else "   UPWARD"
        print("%-8s -> %-8s %5d%s" % (a, b, n, mark), file=sys.stderr)
    print("include-graph: %d includes between floors, %d down, %d up or sideways" %
          (down + up, down, up), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
