#!/usr/bin/env python3
"""Checks that the library's link dependencies run down the floors of tools/floors.txt.

tools/check-floors.py checks the includes; a declaration written by hand (an `extern`) passes
it. This checks the objects: every symbol a floor's object files leave undefined, and that some
floor of the library defines, must be defined on that floor or one it stands on. The objects
come from the build (cmake/PhotonFloors.cmake writes their list, one "FLOOR OBJECT" per line);
the build runs this after the library and ctest runs it again (tools_check_floor_links).
Exit 0 when all is well, 1 on an upward (or sideways) reference, 77 when nm is missing.
    tools/check-floor-links.py OBJECT_LIST [--nm NM]
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import floors  # noqa: E402

DEFINED = set("TDBRVWGSiu")  # text, data, bss, read-only, weak, small, indirect, unique


def read_objects(path):
    """[(floor, object path)] from the build's list."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split(None, 1)
            if len(words) == 2:
                out.append((words[0], words[1].strip()))
    return out


def symbols(nm, objects):
    """{object: (defined names, undefined names)}, one nm run for all objects."""
    result = collections.defaultdict(lambda: (set(), set()))
    run = subprocess.run([nm, "-P", "-A"] + objects, check=True, stdout=subprocess.PIPE,
                         universal_newlines=True)
    for line in run.stdout.splitlines():
        obj, _, rest = line.partition(": ")
        words = rest.split()
        if len(words) < 2:
            continue
        name, kind = words[0], words[1]
        if kind == "U":
            result[obj][1].add(name)
        elif kind in DEFINED:
            result[obj][0].add(name)
    return result


def check(listing, nm):
    table = floors.Table()
    objects = read_objects(listing)
    unknown = sorted({f for f, _ in objects} - set(table.floors))
    if unknown or not objects:
        print("check-floor-links: %s: %s" % (listing, "no objects" if not objects else
                                               "unknown floors " + ", ".join(unknown)))
        return 1
    syms = symbols(nm, [o for _, o in objects])
    where = collections.defaultdict(set)  # symbol -> floors that define it
    for floor, obj in objects:
        for name in syms[obj][0]:
            where[name].add(floor)
    problems = []
    for floor, obj in objects:
        allowed = table.below[floor] | {floor}
        for name in sorted(syms[obj][1]):
            if where[name] and not where[name] & allowed:
                problems.append("%s (%s) uses %s, defined on %s" %
                                (os.path.basename(obj), floor, name, ", ".join(sorted(where[name]))))
    for p in problems:
        print(p)
    print("check-floor-links: %d objects on %d floors, %d symbols defined, %d upward references" %
          (len(objects), len({f for f, _ in objects}), len(where), len(problems)))
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("listing")
    ap.add_argument("--nm", default="nm")
    args = ap.parse_args()
    if shutil.which(args.nm) is None:
        print("check-floor-links: skipped: no %s" % args.nm)
        return 77
    return check(args.listing, args.nm)


if __name__ == "__main__":
    sys.exit(main())
