# photon-gdb.py: gdb commands for photon's coroutines. Load it in gdb with
#   (gdb) source tools/photon-gdb.py
# then, with the program stopped (a breakpoint, Ctrl-C, a signal):
#   (gdb) photon-ls          every coroutine of every vCPU: state, entry, stack
#   (gdb) photon-bt N        the backtrace of coroutine N of photon-ls (or an address)
# Needs no debug information: the library exports the list of vCPUs
# (photon_gdb_vcpus) and where the fields it needs are (photon_gdb_layout,
# thread/vcpu.cpp); the saved registers of a parked coroutine are read at the
# offsets of thread/arch/frame.h. x86-64 and aarch64.
import struct

import gdb

STATES = {0: "READY", 1: "RUNNING", 2: "SLEEPING", 4: "DONE", 8: "STANDBY"}
TF_MAIN, TF_DAEMON = 4, 16

# Saved frame of a parked coroutine (thread/arch/frame.h): register -> offset
# from its saved sp; "pc" is where it resumes, "sp" what sp is after the
# switch returns.
FRAMES = {
    "x86-64": {"regs": {"r15": 0x08, "r14": 0x10, "r13": 0x18, "r12": 0x20,
                        "rbx": 0x28, "rbp": 0x30},
               "pc": 0x38, "sp_after": 0x40, "pc_reg": "rip", "sp_reg": "rsp"},
    "aarch64": {"regs": {"x29": 0x00, "x19": 0x10, "x20": 0x18, "x21": 0x20,
                         "x22": 0x28, "x23": 0x30, "x24": 0x38, "x25": 0x40,
                         "x26": 0x48, "x27": 0x50, "x28": 0x58},
                "pc": 0x08, "sp_after": 0xb0, "pc_reg": "pc", "sp_reg": "sp"},
}


def arch():
    name = gdb.selected_frame().architecture().name()
    if "x86-64" in name:
        return "x86-64"
    if "aarch64" in name:
        return "aarch64"
    raise gdb.GdbError("photon-gdb: no frame layout for " + name)


def read_u64(addr):
    return struct.unpack("<Q", bytes(gdb.selected_inferior().read_memory(addr, 8)))[0]


def read_u32(addr):
    return struct.unpack("<I", bytes(gdb.selected_inferior().read_memory(addr, 4)))[0]


def symbol_address(name):
    try:
        return int(gdb.parse_and_eval("(unsigned long)&" + name))
    except gdb.error:
        raise gdb.GdbError("photon-gdb: no symbol %s (is photon linked, and started?)" % name)


class Layout:
    FIELDS = ["version", "th_sp", "th_state", "th_start", "th_stack_lo", "th_stack_hi",
              "th_all_next", "th_flags", "v_all_head", "v_id", "v_next", "v_main"]

    def __init__(self):
        base = symbol_address("photon_gdb_layout")
        for i, f in enumerate(self.FIELDS):
            setattr(self, f, read_u64(base + 8 * i))
        if self.version != 1:
            raise gdb.GdbError("photon-gdb: layout version %d, expected 1" % self.version)


def describe(addr):
    if not addr:
        return "-"
    out = gdb.execute("info symbol 0x%x" % addr, to_string=True).strip()
    return out.split(" in section")[0] if "No symbol" not in out else "0x%x" % addr


def os_thread_sps():
    """{gdb thread number: its stack pointer} for every OS thread of the inferior."""
    sps = {}
    selected = gdb.selected_thread()
    for t in gdb.selected_inferior().threads():
        t.switch()
        sps[t.num] = int(gdb.parse_and_eval("(unsigned long)$sp"))
    if selected:
        selected.switch()
    return sps


def on_cpu(sps, lo, hi):
    """The gdb thread number whose stack pointer is in [lo, hi), or None. That
    coroutine runs there, or (SLEEPING) waits for events on the idle vCPU's
    behalf: the scheduler has no stack of its own."""
    return next((num for num, sp in sps.items() if lo <= sp < hi), None)


def coroutines():
    """[(index, vcpu id, thread address, state, flags, entry, lo, hi)] of every vCPU."""
    lay = Layout()
    out = []
    v = read_u64(symbol_address("photon_gdb_vcpus"))
    while v:
        vid = read_u32(v + lay.v_id)
        th = read_u64(v + lay.v_all_head)
        while th:
            out.append((len(out) + 1, vid, th, read_u32(th + lay.th_state),
                        read_u32(th + lay.th_flags), read_u64(th + lay.th_start),
                        read_u64(th + lay.th_stack_lo), read_u64(th + lay.th_stack_hi)))
            th = read_u64(th + lay.th_all_next)
        v = read_u64(v + lay.v_next)
    return out


class PhotonLs(gdb.Command):
    """List every photon coroutine: photon-ls"""

    def __init__(self):
        super().__init__("photon-ls", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        sps = os_thread_sps()
        rows = coroutines()
        if not rows:
            print("photon-gdb: no vCPU (photon::init not called yet?)")
        for i, vid, th, state, flags, start, lo, hi in rows:
            cpu = on_cpu(sps, lo, hi)
            name = STATES.get(state, str(state))
            if cpu is not None:
                name = "RUNNING" if state == 0 else name + " (idle wait)"
            kind = "main" if flags & TF_MAIN else "daemon" if flags & TF_DAEMON else ""
            entry = "(the vCPU's own thread)" if flags & TF_MAIN else describe(start)
            where = " on gdb thread %d" % cpu if cpu is not None else ""
            print("#%-3d vcpu %-2d thread 0x%x %-20s %-6s stack [0x%x, 0x%x) entry %s%s" % (
                i, vid, th, name, kind, lo, hi, entry, where))


class PhotonBt(gdb.Command):
    """Backtrace of a parked photon coroutine: photon-bt N (from photon-ls) or photon-bt ADDRESS"""

    def __init__(self):
        super().__init__("photon-bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        if not arg.strip():
            raise gdb.GdbError("usage: photon-bt N | ADDRESS")
        rows = coroutines()
        want = int(gdb.parse_and_eval(arg))
        row = next((r for r in rows if r[0] == want or r[2] == want), None)
        if row is None:
            raise gdb.GdbError("photon-gdb: no coroutine %s (see photon-ls)" % arg)
        _, _, th, state, flags, _, lo, hi = row
        cpu = on_cpu(os_thread_sps(), lo, hi)
        if cpu is not None:
            raise gdb.GdbError("photon-gdb: coroutine %s is on gdb thread %d: `thread %d` then `bt`"
                               % (arg, cpu, cpu))
        lay = Layout()
        sp = read_u64(th + lay.th_sp)
        f = FRAMES[arch()]
        # Borrow the selected OS thread: load the saved registers, print the
        # backtrace, put its own registers back.
        gdb.execute("frame 0", to_string=True)
        names = list(f["regs"]) + [f["pc_reg"], f["sp_reg"]]
        saved = {r: int(gdb.parse_and_eval("(unsigned long)$" + r)) for r in names}
        try:
            for r, off in f["regs"].items():
                gdb.execute("set $%s = 0x%x" % (r, read_u64(sp + off)), to_string=True)
            gdb.execute("set $%s = 0x%x" % (f["pc_reg"], read_u64(sp + f["pc"])), to_string=True)
            gdb.execute("set $%s = 0x%x" % (f["sp_reg"], sp + f["sp_after"]), to_string=True)
            print(gdb.execute("bt", to_string=True), end="")
        finally:
            for r in names:
                gdb.execute("set $%s = 0x%x" % (r, saved[r]), to_string=True)


PhotonLs()
PhotonBt()
