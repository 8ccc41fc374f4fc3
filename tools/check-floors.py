#!/usr/bin/env python3
"""Checks that includes run down the floors of tools/floors.txt (doc/style.md, "Layout").

Every library source and public header must sit on a floor (a header on another floor than
its folder's says so in a line "// Floor: NAME"); every #include "..." and
#include <photon/...> in them must resolve to a file, on the includer's floor or one it stands
on. An upward (or sideways) include is reported unless it is allowlisted in the table; an
allowlisted include that no longer exists is reported too, so that the list only shrinks.
Exit 0 when all is well, 1 otherwise.
    tools/check-floors.py [--root DIR] [-v]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import floors  # noqa: E402


def check(root, verbose):
    try:
        table = floors.Table(os.path.join(root, "tools", "floors.txt"))
    except (floors.TableError, OSError) as e:
        print("check-floors: %s" % e)
        return 1
    problems = []
    files = floors.library_files(root)
    fileset = set(files)
    for rel in files:
        if table.floor_of(rel) is None:
            problems.append("%s: on no floor (add it to tools/floors.txt)" % rel)
    for path in sorted(table.places):
        if path.endswith("/"):
            if not os.path.isdir(os.path.join(root, path)):
                problems.append("tools/floors.txt: no folder %s" % path)
        elif path not in fileset:
            problems.append("tools/floors.txt: no file %s" % path)
    # A header on another floor than its module folder's says so in one line ("// Floor: X").
    for rel in files:
        if not rel.endswith((".h", ".hpp")) or table.floor_of(rel) is None:
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            said = floors.FLOOR_LINE_RE.findall(f.read())
        mine, home = table.floor_of(rel), table.home_floor(rel)
        if said and said != [mine]:
            problems.append("%s: says \"Floor: %s\", the table puts it on %s" %
                            (rel, ", ".join(said), mine))
        elif not said and home is not None and home != mine:
            problems.append("%s: on %s, above its folder's %s: the header must say so in a "
                            "line \"// Floor: %s (tools/floors.txt), ...\"" % (rel, mine, home, mine))
    n_includes = 0
    seen_allowed = set()
    for rel in files:
        mine = table.floor_of(rel)
        for line, spelled, target in floors.includes(rel, root):
            n_includes += 1
            if target is None:
                problems.append("%s:%d: #include %s: no such file" % (rel, line, spelled))
                continue
            theirs = table.floor_of(target)
            if mine is None or theirs is None or table.may_include(mine, theirs):
                continue
            if (rel, target) in table.allowed:
                seen_allowed.add((rel, target))
                continue
            problems.append("%s:%d: #include %s: %s includes %s (%s)" %
                            (rel, line, spelled, mine, theirs, target))
    for arrow in sorted(set(table.allowed) - seen_allowed):
        problems.append("tools/floors.txt: allow %s %s: no such upward include any more "
                        "(remove the line)" % arrow)
    for p in problems:
        print(p)
    summary = ("check-floors: %d files on %d floors, %d includes, %d allowlisted upward, "
               "%d problems" % (len(files), len(table.floors), n_includes, len(seen_allowed),
                                len(problems)))
    print(summary)
    if verbose:
        counts = {}
        for rel in files:
            counts[table.floor_of(rel)] = counts.get(table.floor_of(rel), 0) + 1
        for fl in table.floors:
            print("  %-8s %4d files" % (fl, counts.get(fl, 0)))
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=floors.ROOT, help="the repository (default: this one)")
    ap.add_argument("-v", "--verbose", action="store_true", help="files per floor")
    args = ap.parse_args()
    return check(os.path.abspath(args.root), args.verbose)


if __name__ == "__main__":
    sys.exit(main())
