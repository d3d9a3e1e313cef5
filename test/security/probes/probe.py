"""Attack probes for the skills-mcp security suite. Runs INSIDE the sandbox under test.

Reads one JSON object on stdin: {"action": ..., "host": {...}, "exec_canary": path, ...params}
and prints one JSON object on stdout. The host side judges the outcome by its own canaries;
what this script prints is supporting detail, never the verdict on its own.

SAFETY (notes/sandbox-linux.md): an action that could change the host (mount, sethostname,
writes outside the output folder, signals, filling space, forking many processes) first proves
it is in new mount, pid and uts namespaces (compared with the host's namespace ids passed in)
and refuses otherwise (exit 99). Network actions prove a new network namespace first. No action
contacts anything but the test's own loopback listeners. Secrets are never printed: only the
sha256 of tokens that look like the harness's canaries.
"""
import ctypes
import errno as E
import hashlib
import json
import os
import re
import signal
import socket
import stat
import struct
import sys
import time

CFG = json.loads(sys.stdin.read() or "{}")
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
TOKEN = re.compile(rb"SKMCP-CANARY-[0-9a-f]{32}")


def out(obj, code=0):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
    os._exit(code)


def ns_id(kind):
    try:
        return os.readlink("/proc/self/ns/" + kind)
    except OSError:
        return None


def require_isolated(*kinds):
    host = CFG.get("host", {}).get("ns", {})
    for k in kinds:
        mine = ns_id(k)
        if mine is None or host.get(k) in (None, mine):
            out({"refused": "not in a new %s namespace" % k}, 99)


def err(fn):
    try:
        fn()
        return 0
    except OSError as e:
        return e.errno or -1


def sys_errno(nr, *args):
    ctypes.set_errno(0)
    r = LIBC.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return 0 if r >= 0 else ctypes.get_errno()


def tokens(data):
    return sorted({hashlib.sha256(t).hexdigest() for t in TOKEN.findall(data)})


def read_head(path, n=65536):
    with open(path, "rb") as f:
        return f.read(n)


def file_report(path):
    try:
        data = read_head(path, 1 << 20)
        return {"path": path, "readable": True, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                "tokens": tokens(data)}
    except OSError as e:
        return {"path": path, "readable": False, "errno": e.errno}


X64 = os.uname().machine == "x86_64"
NR = {  # only what the probes call directly
    "io_uring_setup": 425, "unshare": 272 if X64 else 97, "mount": 165 if X64 else 40,
    "umount2": 166 if X64 else 39, "pivot_root": 155 if X64 else 41, "chroot": 161 if X64 else 51,
    "keyctl": 250 if X64 else 219, "add_key": 248 if X64 else 217, "bpf": 321 if X64 else 280,
    "perf_event_open": 298 if X64 else 241, "userfaultfd": 323 if X64 else 282, "ptrace": 101 if X64 else 117,
    "process_vm_readv": 310 if X64 else 270, "sethostname": 170 if X64 else 161, "setns": 308 if X64 else 268,
    "open_tree": 428, "fsopen": 430,
}


# --- filesystem ------------------------------------------------------------------------------
def a_read(c):
    return {"files": [file_report(p) for p in c["paths"]]}


def a_list(c):
    res = {}
    for p in c["paths"]:
        try:
            res[p] = {"entries": sorted(os.listdir(p))}
        except OSError as e:
            res[p] = {"errno": e.errno}
    return {"dirs": res}


def a_write(c):
    require_isolated("mnt", "pid", "uts")
    res = {}
    for p in c["paths"]:
        res[p] = err(lambda: open(p, "w").write("SANDBOX-WROTE-THIS"))
    return {"writes": res}


def a_modify_tree(c):
    require_isolated("mnt", "pid", "uts")
    root, res = c["root"], {}
    for dirpath, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            res["append " + p] = err(lambda: open(p, "a").write("x"))
            res["chmod " + p] = err(lambda: os.chmod(p, 0o777))
            res["unlink " + p] = err(lambda: os.unlink(p))
        res["create in " + dirpath] = err(lambda: open(os.path.join(dirpath, "new-file"), "w").write("x"))
    res["rename root"] = err(lambda: os.rename(root, root + ".moved"))
    return {"results": res}


def a_symlink_read(c):
    link = os.path.join(c["out"], "link-to-secret")
    made = err(lambda: os.symlink(c["target"], link))
    return {"made": made, "read": file_report(link)}


def a_leave_links(c):
    o, res = c["out"], {}
    os.makedirs(os.path.join(o, "files"), exist_ok=True)
    res["symlink output.json"] = err(lambda: os.symlink(c["target"], os.path.join(o, "output.json")))
    res["symlink files/x"] = err(lambda: os.symlink(c["target"], os.path.join(o, "files", "x")))
    own = os.path.join(o, "made-inside")
    res["create made-inside"] = err(lambda: open(own, "w").write("x"))
    res["hardlink own file"] = err(lambda: os.link(own, os.path.join(o, "files", "self-link")))
    for i, cand in enumerate(c.get("hardlink_candidates", [])):
        res["hardlink " + cand] = err(lambda: os.link(cand, os.path.join(o, "files", "h%d" % i)))
    return {"results": res}


def a_mknod(c):
    require_isolated("mnt", "pid", "uts")
    res = {}
    for name, major, minor in (("null", 1, 3), ("mem", 1, 1), ("sda", 8, 0)):
        p = os.path.join(c["out"], "dev-" + name)
        res[name] = err(lambda: os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(major, minor)))
    return {"results": res}


def a_kernel_memory(c):
    res = {}
    for p in ("/dev/mem", "/dev/kmem", "/dev/port", "/proc/kcore", "/dev/core", "/sys/kernel/debug"):
        try:
            with open(p, "rb") as f:
                res[p] = {"bytes": len(f.read(16))}
        except OSError as e:
            res[p] = {"errno": e.errno}
    return {"results": res}


def a_fill(c):
    """Writes 1 MiB chunks to files until an error or the safety cap."""
    require_isolated("mnt", "pid", "uts")
    chunk, written, files, code = b"\0" * (1 << 20), 0, c.get("files", 1), 0
    for i in range(files):
        try:
            with open("%s.%d" % (c["path"], i), "wb") as f:
                per = 0
                while written < c["cap_bytes"] and per < c.get("per_file_cap", 1 << 62):
                    f.write(chunk)
                    f.flush()
                    written += len(chunk)
                    per += len(chunk)
        except OSError as e:
            code = e.errno
            break
    return {"written": written, "errno": code}


def a_mount_games(c):
    require_isolated("mnt", "pid", "uts")
    cs = ctypes.c_char_p
    o, s = c["out"].encode(), c["skill"].encode()
    return {"results": {
        "mount tmpfs on out": sys_errno(NR["mount"], cs(b"none"), cs(o), cs(b"tmpfs"), 0, None),
        "bind / on out": sys_errno(NR["mount"], cs(b"/"), cs(o), None, 4096, None),
        "remount /usr rw": sys_errno(NR["mount"], None, cs(b"/usr"), None, 32, None),
        "umount skill": sys_errno(NR["umount2"], cs(s), 2),
        "rename out": err(lambda: os.rename(c["out"], c["out"] + ".moved")),
        "rename skill": err(lambda: os.rename(c["skill"], c["skill"] + ".moved")),
        "open_tree": sys_errno(NR["open_tree"], -100, cs(b"/"), 1),
        "fsopen": sys_errno(NR["fsopen"], cs(b"tmpfs"), 0),
    }}


# --- secrets -----------------------------------------------------------------------------------
def a_secret_scan(c):
    srcs = {"env": b"\n".join(("%s=%s" % kv).encode() for kv in os.environ.items())}
    for p in ("/proc/self/environ", "/proc/1/environ", "/proc/1/cmdline", "/proc/self/cmdline",
              "/proc/%d/environ" % os.getppid(), "/proc/%d/cmdline" % os.getppid()):
        try:
            srcs[p] = read_head(p, 1 << 20)
        except OSError as e:
            srcs[p] = b""
    return {"tokens": {k: tokens(v) for k, v in srcs.items()}, "pid1_is_self": os.getpid() == 1,
            "pid1_cmdline": srcs["/proc/1/cmdline"].split(b"\0")[0].decode(errors="replace")}


def a_fd_scan(c):
    fds = {}
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            target = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            continue
        entry = {"target_is_canary": "canary" in target}
        if fd > 2:
            try:
                entry["tokens"] = tokens(os.pread(fd, 65536, 0))
            except OSError as e:
                entry["errno"] = e.errno
        fds[fd] = entry
    return {"fds": fds}


def a_pids(c):
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    hp = c.get("host_pid")
    visible = False
    if hp is not None:
        try:
            visible = b"skmcp-canary-sleeper" in read_head("/proc/%d/cmdline" % hp)
        except OSError:
            visible = False
    return {"count": len(pids), "max": max(pids), "host_pid_visible": visible}


def a_signal(c):
    require_isolated("pid", "mnt", "uts")
    res = {"kill pid": err(lambda: os.kill(c["pid"], signal.SIGKILL))}
    res["kill -1"] = err(lambda: os.kill(-1, signal.SIGKILL))
    return {"results": res}


# --- network -----------------------------------------------------------------------------------
def a_tcp(c):
    if not c.get("allow_host_net"):
        require_isolated("net")
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    code = err(lambda: s.connect(("127.0.0.1", c["port"])))
    if code == 0:
        s.sendall(b"SANDBOX-CONNECTED\n")
    s.close()
    return {"errno": code}


def a_udp(c):
    require_isolated("net")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    code = err(lambda: s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", ("127.0.0.1", c["port"])))
    return {"errno": code}


def a_interfaces(c):
    return {"interfaces": sorted(n for _, n in socket.if_nameindex())}


def a_dns(c):
    require_isolated("net")
    res = {}
    for name in ("localhost", "skills-mcp-canary.invalid"):
        try:
            res[name] = sorted({a[4][0] for a in socket.getaddrinfo(name, 80)})
        except socket.gaierror as e:
            res[name] = "error %d" % e.errno
    res["resolv.conf"] = os.path.exists("/etc/resolv.conf")
    return {"results": res}


def a_unix(c):
    res = {}
    for label, addr in (("path", c.get("path")), ("abstract", "\0" + c["abstract"] if c.get("abstract") else None)):
        if addr is None:
            continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        code = err(lambda: s.connect(addr))
        if code == 0:
            s.sendall(b"SANDBOX-CONNECTED\n")
        s.close()
        res[label] = code
    return {"results": res}


def a_families(c):
    res = {}
    for label, fam, typ in (("AF_VSOCK", 40, socket.SOCK_STREAM), ("AF_PACKET", 17, socket.SOCK_RAW),
                            ("AF_INET SOCK_RAW", socket.AF_INET, socket.SOCK_RAW), ("AF_ALG", 38, socket.SOCK_SEQPACKET),
                            ("AF_BLUETOOTH", 31, socket.SOCK_STREAM), ("AF_CAN", 29, socket.SOCK_RAW)):
        def mk():
            socket.socket(fam, typ).close()
        res[label] = err(mk)
    return {"results": res}


def a_io_uring(c):
    params = ctypes.create_string_buffer(120)
    return {"errno": sys_errno(NR["io_uring_setup"], 4, params)}


# --- privilege ---------------------------------------------------------------------------------
def a_status(c):
    keep = ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
    st = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in keep:
            st[k] = v.strip()
    if c.get("out"):
        open(os.path.join(c["out"], "owner-check"), "w").write("x")
    mounts = {}
    for line in open("/proc/self/mountinfo"):
        parts = line.split()
        mounts[parts[4]] = parts[5]
    return {"status": st, "usr_mount_opts": mounts.get("/usr", "")}


def a_setuid(c):
    require_isolated("mnt", "pid", "uts")
    found = []
    for d in ("/usr/bin", "/usr/sbin"):
        for n in sorted(os.listdir(d)):
            try:
                if os.stat(os.path.join(d, n)).st_mode & stat.S_ISUID:
                    found.append(os.path.join(d, n))
            except OSError:
                pass
    target = os.path.join(c["out"], "suid-mnt")
    os.makedirs(target, exist_ok=True)
    rc = None
    if "/usr/bin/mount" in found:
        pid = os.fork()
        if pid == 0:
            os.execv("/usr/bin/mount", ["mount", "-t", "tmpfs", "none", target])
        rc = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    mounted = any(l.split()[4] == target for l in open("/proc/self/mountinfo"))
    return {"setuid_binaries": len(found), "mount_rc": rc, "mounted": mounted, "euid_after": os.geteuid()}


def a_userns(c):
    require_isolated("mnt", "pid", "uts")
    return {"results": {
        "unshare(CLONE_NEWUSER)": sys_errno(NR["unshare"], 0x10000000),
        "unshare(CLONE_NEWNS)": sys_errno(NR["unshare"], 0x00020000),
        "unshare(CLONE_NEWNET)": sys_errno(NR["unshare"], 0x40000000),
        "setns(own mnt ns)": sys_errno(NR["setns"], os.open("/proc/self/ns/mnt", os.O_RDONLY), 0),
    }}


def a_mount_syscalls(c):
    require_isolated("mnt", "pid", "uts")
    cs, o = ctypes.c_char_p, c["out"].encode()
    return {"results": {
        "mount tmpfs": sys_errno(NR["mount"], cs(b"none"), cs(o), cs(b"tmpfs"), 0, None),
        "pivot_root": sys_errno(NR["pivot_root"], cs(o), cs(o)),
        "chroot": sys_errno(NR["chroot"], cs(o)),
        "umount /proc": sys_errno(NR["umount2"], cs(b"/proc"), 2),
    }}


def a_tiocsti(c):
    require_isolated("mnt", "pid", "uts")
    import fcntl
    res = {}
    for label in ("0", "1", "2", "/dev/tty"):
        def inject():
            fd = int(label) if label.isdigit() else os.open(label, os.O_RDWR)
            fcntl.ioctl(fd, 0x5412, b"#")
        res[label] = err(inject)
    return {"results": res, "sid_is_self": os.getsid(0) == os.getpid() or os.getsid(0) == 1}


def a_kernel_apis(c):
    cs = ctypes.c_char_p
    attr = ctypes.create_string_buffer(128)
    struct.pack_into("IIQ", attr, 0, 1, 128, 0)  # PERF_TYPE_SOFTWARE, size, PERF_COUNT_SW_CPU_CLOCK
    bpf_attr = ctypes.create_string_buffer(struct.pack("IIII", 2, 4, 4, 1) + b"\0" * 112)  # BPF_MAP_TYPE_ARRAY
    return {"results": {
        "add_key": sys_errno(NR["add_key"], cs(b"user"), cs(b"skmcp"), cs(b"x"), 1, -2),
        "keyctl(join session)": sys_errno(NR["keyctl"], 1, None),
        "bpf(map_create)": sys_errno(NR["bpf"], 0, bpf_attr, 128),
        "perf_event_open": sys_errno(NR["perf_event_open"], attr, 0, -1, -1, 0),
        "userfaultfd": sys_errno(NR["userfaultfd"], 0),
    }}


def a_ptrace(c):
    buf = ctypes.create_string_buffer(8)
    local = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 8)
    remote = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 8)
    return {"results": {
        "ptrace(TRACEME)": sys_errno(NR["ptrace"], 0, 0, 0, 0),
        "ptrace(ATTACH 1)": sys_errno(NR["ptrace"], 16, 1, 0, 0),
        "process_vm_readv(1)": sys_errno(NR["process_vm_readv"], 1, local, 1, remote, 1, 0),
    }}


def a_sethostname(c):
    require_isolated("mnt", "pid", "uts")
    return {"errno": sys_errno(NR["sethostname"], ctypes.c_char_p(b"pwned"), 5), "hostname": socket.gethostname()}


# --- resources ---------------------------------------------------------------------------------
def a_daemon(c):
    require_isolated("pid", "mnt", "uts")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            while True:
                with open(c["beat"], "a") as f:
                    f.write(".")
                time.sleep(0.05)
        os._exit(0)
    time.sleep(0.3)
    print("started", flush=True)
    if c.get("hang"):
        time.sleep(3600)
    return {"parent_exit": True}


def a_cpu_burn(c):
    print("burning", flush=True)
    x = 0
    while True:
        x += 1


def a_heap(c):
    """Allocates and touches 8 MiB blocks, reporting progress, until failure or the safety cap."""
    blocks, mb = [], 0
    try:
        while mb < c["cap_mb"]:
            blocks.append(bytearray(8 << 20))
            mb += 8
            sys.stdout.write("%d\n" % mb)
            sys.stdout.flush()
    except MemoryError:
        out({"stopped": "MemoryError", "mb": mb})
    return {"stopped": "cap", "mb": mb}


def a_offheap(c):
    """Grows shared memory outside the heap (memfd, shared mmap, /dev/shm) until failure or the cap."""
    require_isolated("mnt", "pid", "uts")
    import mmap
    kind, mb = c["kind"], 0
    chunk = b"\1" * (8 << 20)
    try:
        if kind == "memfd":
            fd = os.memfd_create("skmcp")
            while mb < c["cap_mb"]:
                os.write(fd, chunk)
                mb += 8
                print(mb, flush=True)
        elif kind == "devshm":
            with open("/dev/shm/skmcp", "wb") as f:
                while mb < c["cap_mb"]:
                    f.write(chunk)
                    f.flush()
                    mb += 8
                    print(mb, flush=True)
        else:
            maps = []
            while mb < c["cap_mb"]:
                m = mmap.mmap(-1, 8 << 20, flags=mmap.MAP_SHARED)
                m.write(chunk)
                maps.append(m)
                mb += 8
                print(mb, flush=True)
    except (OSError, MemoryError) as e:
        out({"stopped": getattr(e, "errno", None) or type(e).__name__, "mb": mb})
    return {"stopped": "cap", "mb": mb}


def a_fork_bomb(c):
    require_isolated("pid", "mnt", "uts")
    n = 0
    try:
        while n < c["cap"]:
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            n += 1
    except OSError as e:
        out({"forked": n, "errno": e.errno})
    return {"forked": n, "errno": 0}


def a_flood(c):
    b = b"x" * (1 << 20)
    for _ in range(c["mb"]):
        sys.stdout.buffer.write(b)
    sys.stdout.flush()
    os._exit(0)


# --- adapter -----------------------------------------------------------------------------------
def a_argv(c):
    return {"argv": sys.argv[1:]}


# --- found past the first matrix ------------------------------------------------------------------
def a_workspace_plant(c):
    """Tries to leave code the host runs at its next `git`: .git/commondir indirection, a renamed and replaced
    .git, a nested repository, a direnv file, a symlink into .git. Also writes one ordinary file."""
    require_isolated("mnt", "pid", "uts")
    w, cmd, res = c["workspace"], c["command"], {}
    cfg = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"%s\"\n" % cmd

    def repo(d):
        for sub in ("objects", "refs/heads"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        open(os.path.join(d, "HEAD"), "w").write("ref: refs/heads/main\n")
        open(os.path.join(d, "config"), "w").write(cfg)

    def evil_common():
        repo(os.path.join(w, ".evil"))
        open(os.path.join(w, ".git", "commondir"), "w").write("../.evil\n")

    res["commondir"] = err(evil_common)
    res["rename .git"] = err(lambda: os.rename(os.path.join(w, ".git"), os.path.join(w, ".git-orig")))
    res["replace .git"] = err(lambda: repo(os.path.join(w, ".git")))
    res["config in .git"] = err(lambda: open(os.path.join(w, ".git", "config"), "a").write(cfg))
    res["nested repo"] = err(lambda: repo(os.path.join(w, "sub", ".git")))
    res[".envrc"] = err(lambda: open(os.path.join(w, ".envrc"), "w").write(cmd + "\n"))
    res["symlink to hooks"] = err(lambda: os.symlink(".git/hooks", os.path.join(w, "hooks")))
    res["ordinary file"] = err(lambda: open(os.path.join(w, "applied.txt"), "w").write(c["token"]))
    return {"results": res}


def a_workspace_write(c):
    """Writes `c["files"]` ({relative path: content}) into the workspace, making parent folders, deletes
    `c["delete"]`; reports errno per path, then exits with `c["exit"]` (0). What reaches the host is for the host
    side to judge."""
    require_isolated("mnt", "pid", "uts")
    w, res = c["workspace"], {}

    def write(rel, data):
        p = os.path.join(w, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(data)

    for rel, data in c["files"].items():
        res[rel] = err(lambda: write(rel, data))
    for rel in c.get("delete", []):
        res[rel] = err(lambda: os.unlink(os.path.join(w, rel)))
    # A script that fails after writing (`exit`: its exit code): what it wrote is not applied by default.
    out({"results": res}, c.get("exit", 0))


def a_swap_on_kill(c):
    """Survivors keep swapping workspace folders with links to `c["target"]` (a host folder the test made) while
    pid 1 makes its own death slow (memory to tear down before the kernel kills the rest); the run then hits its
    wall-clock limit. Where the server applies the copy or removes it before every process is gone, it follows a
    link: it reads the target's `secret` into the workspace, or deletes the target's files."""
    require_isolated("mnt", "pid", "uts")
    w, target, n = c["workspace"], c["target"], c.get("dirs", 8)
    for i in range(n):
        d = os.path.join(w, "d%d" % i)
        os.mkdir(d)
        for name in ("secret", "victim"):
            open(os.path.join(d, name), "w").write("copy")
        os.symlink(target, os.path.join(w, "l%d" % i))
    print("started", flush=True)
    for k in range(4):
        if os.fork() == 0:
            os.close(0), os.close(1), os.close(2)
            mine = [i for i in range(n) if i % 4 == k]
            while True:
                for i in mine:
                    d, l, r = (os.path.join(w, "%s%d" % (p, i)) for p in ("d", "l", "r"))
                    for a, b in ((d, r), (l, d), (d, l), (r, d)):
                        err(lambda: os.rename(a, b))
    big = bytearray(c.get("mib", 600) << 20)
    for i in range(0, len(big), 4096):
        big[i] = 1
    time.sleep(1000)


def a_workspace_deep(c):
    """Nests folders in the workspace copy past PATH_MAX (changing into each one it makes), so that a server that
    walks or removes the copy by full paths fails and leaves it on the host's disk. The first folder is named
    `c["marker"]`."""
    require_isolated("mnt", "pid", "uts")
    os.chdir(c["workspace"])
    os.mkdir(c["marker"])
    os.chdir(c["marker"])
    for i in range(24):
        name = ("%02d" % i) + "d" * 240
        os.mkdir(name)
        os.chdir(name)
    open("deep.txt", "w").write("deep")
    return {"depth_bytes": len(os.getcwd())}


def shellcode_x64():
    """prctl(PR_SET_PDEATHSIG, 0); write(fd, &1, 8) for fd 3..31 (bwrap's init reports "exit 0" on its eventfd);
    then pause() forever."""
    head = bytes.fromhex("b89d000000" "bf01000000" "31f6" "0f05" "41bc03000000")
    loop = bytes.fromhex("b801000000" "4489e7") + b"\x48\x8d\x35" + b"REL0" + bytes.fromhex(
        "ba08000000" "0f05" "41ffc4" "4183fc20")
    jl_len, hang = 2, bytes.fromhex("b822000000" "0f05")
    body_len = len(head) + len(loop) + jl_len + len(hang) + 2
    lea_end = len(head) + 5 + 3 + 3 + 4
    loop = loop.replace(b"REL0", struct.pack("<i", body_len - lea_end))
    jl = bytes([0x7C, (-(len(loop) + jl_len)) & 0xFF])
    jmp = bytes([0xEB, (-(len(hang) + 2)) & 0xFF])
    return head + loop + jl + hang + jmp + struct.pack("<Q", 1)


def a_outlive(c):
    """A child keeps writing into the output folder after the script returns. Where pid 1 is another process of
    the same user (bwrap's init), its code is rewritten through /proc/1/mem so it reports an exit and stays."""
    require_isolated("mnt", "pid", "uts")
    res = {"pid1_is_me": os.getpid() == 1}
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            end = time.time() + 20
            while time.time() < end:
                with open(c["beat"], "a") as f:
                    f.write(".")
                time.sleep(0.05)
        os._exit(0)
    time.sleep(0.3)
    res["clear own pdeathsig"] = sys_errno(157 if X64 else 167, 1, 0)
    if os.getpid() != 1 and X64:
        try:
            fields = open("/proc/1/syscall").read().split()
            pc = int(fields[-1], 16)
            with open("/proc/1/mem", "r+b", buffering=0) as m:
                m.seek(pc)
                m.write(shellcode_x64())
            res["pid1_rewritten"] = True
        except (OSError, ValueError, IndexError) as e:
            res["pid1_rewritten"] = getattr(e, "errno", None) or str(e)
    print("started", flush=True)
    if c.get("hang"):
        time.sleep(30)  # bounded: a survivor must not outlive the test by much
    return res


SIOCGIFCONF = 0x8912


def a_stdio_ioctl(c):
    """Interface names the stdio fds reveal through socket ioctls (the fds' own network namespace)."""
    res = {}
    for fd in (0, 1, 2):
        st = os.fstat(fd)
        entry = {"socket": stat.S_ISSOCK(st.st_mode), "fifo": stat.S_ISFIFO(st.st_mode)}
        buf = ctypes.create_string_buffer(40 * 64)
        ifc = struct.pack("iL", len(buf), ctypes.addressof(buf))
        arg = ctypes.create_string_buffer(ifc, len(ifc))
        ctypes.set_errno(0)
        r = LIBC.ioctl(fd, SIOCGIFCONF, arg)
        if r == 0:
            n = struct.unpack_from("i", arg.raw)[0]
            entry["names"] = sorted({buf.raw[i:i + 16].split(b"\0")[0].decode("ascii", "replace")
                                     for i in range(0, n, 40)})
        else:
            entry["errno"] = ctypes.get_errno()
        res[str(fd)] = entry
    return {"fds": res}


def a_watch_host(c):
    """Watches a read-only host folder for opens and reads by host processes (inotify), and tries fanotify."""
    res = {"events": []}
    ctypes.set_errno(0)
    fd = LIBC.inotify_init1(os.O_NONBLOCK)
    res["inotify_init1"] = 0 if fd >= 0 else ctypes.get_errno()
    fa = sys_errno(300 if X64 else 262, 0x200 | 0x4, 0)  # FAN_REPORT_FID | FAN_CLASS_NOTIF
    res["fanotify_init"] = fa
    if fd >= 0:
        wd = LIBC.inotify_add_watch(fd, c["dir"].encode(), 0x20 | 0x1)  # IN_OPEN | IN_ACCESS
        res["add_watch"] = 0 if wd >= 0 else ctypes.get_errno()
        end = time.time() + c.get("seconds", 3)
        while time.time() < end:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                time.sleep(0.05)
                continue
            i = 0
            while i + 16 <= len(data):
                _wd, mask, _cookie, ln = struct.unpack_from("iIII", data, i)
                name = data[i + 16:i + 16 + ln].split(b"\0")[0].decode("utf-8", "replace")
                res["events"].append(name)
                i += 16 + ln
        res["events"] = sorted(set(res["events"]))
    return res


def a_hog(c):
    """Takes as many per-user kernel objects as it can (inotify instances, pseudo-terminals) and holds them."""
    got, fds = {"inotify": 0, "pty": 0}, []
    errs = {}
    for _ in range(c.get("max", 256)):
        ctypes.set_errno(0)
        fd = LIBC.inotify_init1(0)
        if fd < 0:
            errs["inotify"] = ctypes.get_errno()
            break
        fds.append(fd)
        got["inotify"] += 1
    for _ in range(min(c.get("max", 256), 64)):
        try:
            fds.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
            got["pty"] += 1
        except OSError as e:
            errs["pty"] = e.errno
            break
    print("holding", flush=True)
    time.sleep(c.get("hold", 0))
    return {"got": got, "errno": errs}


def a_new_syscalls(c):
    """Syscalls the first filter did not know: each must be refused (EPERM or ENOSYS)."""
    cs = ctypes.c_char_p
    buf = ctypes.create_string_buffer(64)
    pid = os.getpid()
    res = {
        "open_tree_attr": sys_errno(467, -100, cs(b"/tmp"), 0, None, 0),
        "statmount": sys_errno(457, None, None, 0, 0),
        "listmount": sys_errno(458, None, None, 0, 0),
        "fanotify_init": sys_errno(300 if X64 else 262, 0x200 | 0x4, 0),
        "memfd_secret": sys_errno(447, 0),
        "kcmp": sys_errno(312 if X64 else 272, pid, pid, 0, 0, 0),
        "personality(ADDR_NO_RANDOMIZE)": sys_errno(135 if X64 else 92, 0x0040000),
        "unknown 471": sys_errno(471, 0, 0, 0),
    }
    if X64:
        res["modify_ldt"] = sys_errno(154, 0, buf, 16)
    return {"results": res}


def a_touch(c):
    return {"errno": err(lambda: open(c["path"], "w").write("ran"))}


def a_hello(c):
    return {"uid": os.getuid(), "env": {k: os.environ.get(k) for k in c.get("keys", [])}}


ACTIONS = {k[2:]: v for k, v in globals().items() if k.startswith("a_")}

if __name__ == "__main__":
    # The uniform canary: a host path the harness never mounts. Creating it is harmless (it is in the
    # harness's own temp folder) and proves the script ran with host filesystem access.
    if CFG.get("exec_canary"):
        err(lambda: open(CFG["exec_canary"], "w").write("executed"))
    action = CFG.get("action")
    if action not in ACTIONS:
        out({"error": "unknown action %r" % action}, 2)
    out(ACTIONS[action](CFG))
