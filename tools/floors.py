"""The floors of photon's library (tools/floors.txt) and the includes between its files.

Shared by tools/check-floors.py and tools/include-graph.py; python3's standard library only.
"""

import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TABLE = os.path.join(ROOT, "tools", "floors.txt")
# Where the library's sources and public headers live (see the folders' CMakeLists.txt).
SCANNED = ("common", "thread", "io", "net", "fs", "rpc", "include/photon")
EXTENSIONS = (".h", ".hpp", ".inl", ".inc", ".cpp", ".cc", ".c", ".S")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
FLOOR_LINE_RE = re.compile(r"^\s*//\s*Floor:\s*(\w+)", re.M)


class TableError(Exception):
    pass


class Table:
    """floors (lowest first), what each stands on (transitively), where files sit, allowlist."""

    def __init__(self, path=TABLE):
        self.path = path
        self.floors = []  # lowest first
        self.below = {}  # floor -> the set of floors it may include (itself excluded)
        self.places = {}  # path (a folder ending in "/", or a file) -> floor
        self.allowed = {}  # (includer, target) -> reason
        with open(path, encoding="utf-8") as f:
            for n, raw in enumerate(f, 1):
                self._line(raw, n)

    def _fail(self, n, msg):
        raise TableError("%s:%d: %s" % (os.path.relpath(self.path, ROOT), n, msg))

    def _line(self, raw, n):
        line, _, comment = raw.partition("#")
        words = line.split()
        if not words:
            return
        if words[0] == "floor":
            name = words[1].rstrip(":")
            if name in self.below:
                self._fail(n, "floor %s twice" % name)
            lower = set()
            for w in words[2:]:
                if w not in self.below:
                    self._fail(n, "floor %s stands on %s, not (yet) defined" % (name, w))
                lower |= {w} | self.below[w]
            self.floors.append(name)
            self.below[name] = lower
        elif words[0] == "allow":
            if len(words) != 3 or not comment.strip():
                self._fail(n, "allow INCLUDER TARGET  # reason")
            self.allowed[(words[1], words[2])] = comment.strip()
        else:
            if len(words) != 2:
                self._fail(n, "PATH FLOOR, or floor ..., or allow ...")
            path, floor = words
            if floor not in self.below:
                self._fail(n, "no floor %s" % floor)
            if path in self.places:
                self._fail(n, "%s placed twice" % path)
            self.places[path] = floor

    def floor_of(self, rel):
        """The floor of a file (longest match: the file itself, else its deepest folder)."""
        if rel in self.places:
            return self.places[rel]
        d = rel
        while "/" in d:
            d = d.rsplit("/", 1)[0]
            if d + "/" in self.places:
                return self.places[d + "/"]
        return None

    def home_floor(self, rel):
        """The floor of a file's module folder (include/photon/<module>/, else its top folder)."""
        parts = rel.split("/")
        top = "/".join(parts[:3]) if rel.startswith("include/photon/") else parts[0]
        return self.places.get(top + "/")

    def rank(self, floor):
        return self.floors.index(floor)

    def may_include(self, includer_floor, target_floor):
        return target_floor == includer_floor or target_floor in self.below[includer_floor]


def library_files(root=ROOT):
    """Every library source and public header, as paths relative to root, sorted."""
    out = []
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in filenames:
                if name.endswith(EXTENSIONS):
                    out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out)


def includes(rel, root=ROOT):
    """(line number, spelling, resolved path or None) of each #include "..." and <photon/...>.

    "x" resolves as the compiler does: next to the includer, else on the include path
    (include/, photon's only one); <photon/x> resolves to include/photon/x.
    """
    out = []
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            if kind == "<" and not name.startswith("photon/"):
                continue
            candidates = ["include/" + name]
            if kind == '"':
                candidates.insert(0, os.path.normpath(os.path.join(os.path.dirname(rel), name)))
            target = next((c for c in candidates if os.path.isfile(os.path.join(root, c))), None)
            spelled = ('"%s"' if kind == '"' else "<%s>") % name
            out.append((n, spelled, target))
    return out
