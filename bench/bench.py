#!/usr/bin/env python3
"""capwrap's benchmark against the targets of SPEC section 9: `make bench`.

One run prints one Markdown table (medians, ratios, targets) and, under it,
the machine it ran on. Inputs are generated into a scratch directory (nothing
large is committed); needs python3 (3.9 or later) and go only.

  throughput  capwrap --preview --keep always --max-capture-bytes 0 --dir-quota 0
              -- cat LOG   vs   cat LOG | tee FILE >/dev/null   vs   cat LOG > FILE
              (preview mode, redaction on, every byte kept; LOG is a 150 MiB
              pytest/compiler-style log); and capwrap with its default limits
  memory      peak RSS of capwrap for LOG (the runs above) and for 10 x LOG
  start-up    capwrap -- true   vs   a Go hello-world built here with the same
              toolchain   vs   true; and two floors in the same rounds: a Go
              program that only runs `true` and waits, and capwrap --version
  redactor    BenchmarkWriterPlainLog and BenchmarkWriterNoSecrets of
              redact/bench_test.go, one core (-test.cpu 1), MB/s
  small writes  1,000,000 writes of 20 bytes: capwrap vs tee

Interleaved: in every round each contender goes first in turn (rotation), so
a slow minute of this shared machine hits all of them; medians are reported.
Every throughput run starts after a sync, and with its output file or
capture directory removed, so none pays for the writeback or the freeing of
another's 150 MiB. The capture is kept (--keep always), as tee and cat keep
FILE: removing it would add capwrap's unlink of 150 MiB to its time only.
Each throughput run gives two wall times: until the command exits, and
until what it wrote is on disk (the run, then a sync, both inside the
clock; issue 28's "synced"). capwrap fsyncs its capture before it exits
(SPEC section 4) and tee and cat do not, so only the second compares the
same work; both are printed.

Environment:
  CAPWRAP             capwrap binary (default ./capwrap)
  BENCH_MB            size of LOG in MiB (default 150; SPEC: 150 to 500 MB)
  BENCH_RUNS          throughput and small-write rounds (default 7)
  BENCH_STARTUP_RUNS  start-up rounds (default 60)
  BENCH_REDACT_ROUNDS redactor rounds (default 5)
  BENCH_REDACT_TIME   -test.benchtime of each redactor round (default 1s)
  BENCH_REDACT_TEST   a prebuilt redact test binary (go test -c ./redact)
  BENCH_SRC           checkout to build that binary from (default this one)
  BENCH_BASE          a second capwrap binary (say, main's), measured in the same
                      rounds as CAPWRAP: its columns "base" are added
  BENCH_BASE_REDACT_TEST, BENCH_BASE_SRC
                      the base's redact test binary, or its checkout
  BENCH_SKIP          comma-separated phases to skip: startup, redact,
                      throughput, rss10, smallwrites
  BENCH_DIR           scratch directory (default a new one under /tmp,
                      removed at the end; a given one is kept and its LOG reused)
"""
import json, os, platform, re, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAPWRAP = os.path.abspath(os.environ.get("CAPWRAP", os.path.join(ROOT, "capwrap")))
MB = int(os.environ.get("BENCH_MB", "150"))
RUNS = int(os.environ.get("BENCH_RUNS", "7"))
STARTUP_RUNS = int(os.environ.get("BENCH_STARTUP_RUNS", "60"))
REDACT_ROUNDS = int(os.environ.get("BENCH_REDACT_ROUNDS", "5"))
REDACT_TIME = os.environ.get("BENCH_REDACT_TIME", "1s")
REDACT_TEST = os.environ.get("BENCH_REDACT_TEST", "")
SRC = os.path.abspath(os.environ.get("BENCH_SRC", ROOT))
BASE = os.environ.get("BENCH_BASE", "")
BASE_REDACT_TEST = os.environ.get("BENCH_BASE_REDACT_TEST", "")
BASE_SRC = os.environ.get("BENCH_BASE_SRC", "")
BUILDS = [("capwrap", CAPWRAP)] + ([("base", os.path.abspath(BASE))] if BASE else [])
SKIP = set(filter(None, os.environ.get("BENCH_SKIP", "").split(",")))
WORK = os.environ.get("BENCH_DIR") or tempfile.mkdtemp(prefix="capwrap-bench-")
os.makedirs(WORK, exist_ok=True)
WORK = os.path.abspath(WORK)
ALL_KEPT = ["--preview", "--keep", "always", "--max-capture-bytes", "0", "--dir-quota", "0"]
# capwrap's own variables would change what is measured.
ENV = {k: v for k, v in os.environ.items() if not k.startswith("CAPWRAP_")}
DEVNULL_FDS = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def gen_log(path, size):
    """A pytest/compiler-style log with a fake AWS key every 10,000 lines."""
    lines = []
    for i in range(20000):
        if i % 10000 == 9999:
            lines.append("config: aws_access_key_id=AKIAQ7ZPLXW3RTYU4BNM region=eu-west-1\n")
        elif i % 3 == 0:
            lines.append("tests/test_mod%03d.py::test_case_%05d PASSED%s[%3d%%]\n" % (i % 250, i, " " * 30, i % 100))
        elif i % 3 == 1:
            lines.append("src/module_%02d/file_%03d.c:%d:%d: warning: unused variable 'tmp_%d' [-Wunused-variable]\n" % (i % 40, i % 300, i % 900, i % 30, i))
        else:
            lines.append("   %d |     int tmp_%d = compute(%d);\n" % (i % 900, i, i))
    block = "".join(lines).encode()
    with open(path + ".tmp", "wb") as f:
        written = 0
        while written < size:
            n = min(len(block), size - written)
            f.write(block[:n])
            written += n
    os.rename(path + ".tmp", path)


def timed(argv, sync=True):
    """Wall time in seconds, peak RSS in KiB and CPU time (user + system)
    in seconds of one run of argv.

    The process is started with posix_spawn (no fork of this interpreter),
    stdin, stdout and stderr on /dev/null, and reaped with wait4: its rusage
    holds the largest RSS of it and of the children it reaped, and the CPU
    time of all of them. With sync,
    dirty pages of earlier runs are written back first, outside the time."""
    if sync:
        os.sync()
    t = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, ENV, file_actions=DEVNULL_FDS)
    _, status, ru = os.wait4(pid, 0)
    dt = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("benchmark command failed (status %d): %s" % (os.waitstatus_to_exitcode(status), " ".join(argv)))
    rss = ru.ru_maxrss / 1024 if sys.platform == "darwin" else ru.ru_maxrss  # bytes there, KiB on Linux
    return dt, rss, ru.ru_utime + ru.ru_stime


def timed_durable(argv):
    """timed(argv) plus one more figure: the wall time until what the run
    wrote is on disk (its run, then a sync, both inside the clock). capwrap
    fsyncs its capture before it exits (SPEC section 4), tee and cat leave
    their FILE dirty in the page cache: this is the time at which all three
    have delivered the same thing, a durable copy. Returns (wall, rss, cpu,
    wall to durable)."""
    os.sync()
    t = time.perf_counter()
    dt, rss, cpu = timed(argv, sync=False)
    os.sync()
    return dt, rss, cpu, time.perf_counter() - t


def fresh_dir(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def rounds(n, contenders):
    """Runs n rounds of the contenders (name -> function returning one
    sample), each going first in turn; returns name -> list of samples."""
    names = list(contenders)
    res = {k: [] for k in names}
    for i in range(n):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            res[name].append(contenders[name]())
    return res


def capture_state(d):
    """The capture state of the one capture under tool-outputs directory d,
    from its receipt.json."""
    for entry in os.listdir(d):
        receipt = os.path.join(d, entry, "receipt.json")
        if os.path.exists(receipt):
            with open(receipt) as f:
                return json.load(f).get("capture", {}).get("state")
    return None


def med(xs, i=None):
    """The median of xs, or of the i-th item of each of them."""
    return statistics.median(xs if i is None else [x[i] for x in xs])


class Table:
    """Rows of measures; each row has a cell (value, ratio to the reference,
    target met) for capwrap and, with BENCH_BASE, for the base build."""

    def __init__(self, builds):
        self.builds = builds
        self.rows = []

    def add(self, measure, cells, reference="", target=""):
        """cells maps a build's key to (text, ratio or None, met or None)."""
        self.rows.append((measure, cells, reference, target))

    def markdown(self):
        head = "| measure | capwrap | reference | ratio | target | met? |"
        if len(self.builds) > 1:
            head += " base | base ratio | base met? |"
        out = [head, "|---" * head.count(" | ") + "|---|"]
        for measure, cells, reference, target in self.rows:
            cols = [measure]
            for i, (key, _) in enumerate(self.builds):
                text, ratio, met = cells.get(key, ("", None, None))
                r = "" if ratio is None else "%.2f x" % ratio
                m = "" if met is None else ("yes" if met else "**no**")
                cols += [text, reference, r, target, m] if i == 0 else [text, r, m]
            out.append("| %s |" % " | ".join(cols))
        return "\n".join(out)


def go_version():
    try:
        return subprocess.run(["go", "version"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "go: not found"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True).stdout.strip() or platform.processor()
    except OSError:
        return platform.processor() or "unknown"


def describe(d):
    r = subprocess.run(["git", "-C", d, "describe", "--tags", "--always", "--dirty"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "not a git checkout"


def loadavg():
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "unknown"


def build_hello():
    """A Go hello-world built with the same toolchain and flags as capwrap
    (make build): the floor of any Go program's start-up."""
    d = fresh_dir("hello")
    with open(os.path.join(d, "main.go"), "w") as f:
        f.write('package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello, world") }\n')
    with open(os.path.join(d, "go.mod"), "w") as f:
        f.write("module hello\n")
    env = dict(ENV, CGO_ENABLED="0")
    subprocess.run(["go", "build", "-trimpath", "-ldflags", "-s -w", "-o", "hello", "."], cwd=d, env=env, check=True)
    return os.path.join(d, "hello")


SPAWN_FLOOR_GO = """package main

import (
	"os"
	"syscall"
)

// The least any Go program that runs a command does: fork and exec it,
// wait for it, exit with its status.
func main() {
	pid, err := syscall.ForkExec(os.Args[1], os.Args[1:], &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		os.Exit(127)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		os.Exit(1)
	}
	os.Exit(ws.ExitStatus())
}
"""


def build_spawn_floor():
    """A Go program, built as build_hello builds, that only runs its
    arguments as a command and waits for it (syscall.ForkExec and Wait4:
    no capture, no signals, no watchdog): the floor of a Go wrapper's
    start-up, against which capwrap's own cost is what lies above it."""
    d = fresh_dir("spawnfloor")
    with open(os.path.join(d, "main.go"), "w") as f:
        f.write(SPAWN_FLOOR_GO)
    with open(os.path.join(d, "go.mod"), "w") as f:
        f.write("module spawnfloor\n")
    env = dict(ENV, CGO_ENABLED="0")
    subprocess.run(["go", "build", "-trimpath", "-ldflags", "-s -w", "-o", "spawnfloor", "."], cwd=d, env=env, check=True)
    return os.path.join(d, "spawnfloor")


def bench_startup(t):
    hello = build_hello()
    floor = build_spawn_floor()
    true = shutil.which("true") or "/bin/true"
    d = fresh_dir("startup")
    contenders = {key: (lambda path=path: timed([path, "--dir", d, "--", "true"], sync=False)) for key, path in BUILDS}
    for key, path in BUILDS:
        contenders[key + "-version"] = lambda path=path: timed([path, "--version"], sync=False)
    contenders["hello"] = lambda: timed([hello], sync=False)
    contenders["floor"] = lambda: timed([floor, true], sync=False)
    contenders["true"] = lambda: timed(["true"], sync=False)
    rounds(5, contenders)  # warm-up: page cache, binaries mapped
    res = rounds(STARTUP_RUNS, contenders)
    h, tr = med(res["hello"], 0), med(res["true"], 0)
    cells = {}
    for key, _ in BUILDS:
        c = med(res[key], 0)
        cells[key] = ("%.2f ms" % (c * 1e3), c / h, c / h <= 1.5)
    t.add("start-up: `capwrap -- true` vs Go hello-world (median of %d)" % STARTUP_RUNS, cells, "%.2f ms" % (h * 1e3), "<= 1.5 x")
    cells = {}
    for key, _ in BUILDS:
        c = med(res[key], 0)
        cells[key] = ("%.2f ms" % ((c - tr) * 1e3), (c - tr) / (h - tr) if h > tr else None, None)
    t.add("start-up above `true` (%.2f ms): capwrap vs hello-world" % (tr * 1e3), cells, "%.2f ms" % ((h - tr) * 1e3))
    f = med(res["floor"], 0)
    t.add("start-up floor: a Go program that only runs `true` and waits (ForkExec, Wait4) vs hello-world",
          {BUILDS[0][0]: ("%.2f ms" % (f * 1e3), f / h, None)}, "%.2f ms" % (h * 1e3))
    cells = {}
    for key, _ in BUILDS:
        c = med(res[key + "-version"], 0)
        cells[key] = ("%.2f ms" % (c * 1e3), c / h, None)
    t.add("start-up without a run: `capwrap --version` vs hello-world", cells, "%.2f ms" % (h * 1e3))
    cells = {}
    for key, _ in BUILDS:
        c = med(res[key], 0)
        cells[key] = ("%.2f ms" % (c * 1e3), c / f, None)
    t.add("start-up: `capwrap -- true` vs the floor above", cells, "%.2f ms" % (f * 1e3))
    h = med(res["hello"], 2)
    cells = {}
    for key, _ in BUILDS:
        c = med(res[key], 2)
        cells[key] = ("%.2f ms" % (c * 1e3), c / h if h else None, None)
    t.add("start-up, CPU time (user + system, the command's included)", cells, "%.2f ms" % (h * 1e3))


def redact_test_binary(key, prebuilt, src):
    """The redact test binary of one build and where it came from: the
    prebuilt one, or one compiled from the checkout src (none: no src)."""
    if prebuilt:
        return os.path.abspath(prebuilt), prebuilt
    if not src:
        return None, "none"
    src = os.path.abspath(src)
    out = os.path.join(WORK, "redact-%s.test" % key)
    env = dict(ENV, CGO_ENABLED="0")
    subprocess.run(["go", "test", "-c", "-trimpath", "-o", out, "./redact"], cwd=src, env=env, check=True)
    return out, "built from %s (%s)" % (src, describe(src))


def bench_redact(t):
    binaries, origins = {}, []
    for key, prebuilt, src in [("capwrap", REDACT_TEST, SRC), ("base", BASE_REDACT_TEST, BASE_SRC)][:len(BUILDS)]:
        binary, origin = redact_test_binary(key, prebuilt, src)
        origins.append(origin if key == "capwrap" else "base's " + origin)
        if binary:
            binaries[key] = binary
    names = ["BenchmarkWriterPlainLog", "BenchmarkWriterNoSecrets"]
    pat = re.compile(r"^(Benchmark\w+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) MB/s")
    runs = [(key, name) for name in names for key in binaries]
    res = {run: [] for run in runs}
    for i in range(REDACT_ROUNDS):
        k = i % len(runs)
        for key, name in runs[k:] + runs[:k]:
            r = subprocess.run([binaries[key], "-test.run", "^$", "-test.bench", "^%s$" % name, "-test.cpu", "1",
                                "-test.benchtime", REDACT_TIME, "-test.count", "1"],
                               capture_output=True, text=True, env=ENV, cwd=WORK)
            got = [m for m in (pat.match(l) for l in r.stdout.splitlines()) if m and m.group(1) == name]
            if r.returncode != 0 or not got:
                sys.exit("redactor benchmark %s of %s failed:\n%s%s" % (name, binaries[key], r.stdout, r.stderr))
            res[(key, name)].append(float(got[0].group(2)))
    for name, what, target in [(names[0], "plain log", 1000), (names[1], "keyword-dense log", 600)]:
        cells = {}
        for key in binaries:
            v = med(res[(key, name)])
            cells[key] = ("%.0f MB/s" % v, None, v >= target)
        t.add("redactor alone, one core, %s (`%s`)" % (what, name), cells, "", ">= %d MB/s" % target)
    return "; ".join(origins)


def bench_throughput(t, logf, skip):
    out = os.path.join(WORK, "out.file")
    rss = {key: [] for key, _ in BUILDS}
    checked = {}

    def capwrap(key, path, name, flags):
        def run():
            remove(out)
            d = fresh_dir(name)
            dt, r, cpu, durable = timed_durable([path, "--dir", d] + flags + ["--", "cat", logf])
            rss[key].append(r)
            if name not in checked:  # the first run of each: did it keep what it should?
                checked[name] = capture_state(d)
            return dt, cpu, durable
        return run

    def shell(cmd):
        def run():
            remove(out)
            dt, _, cpu, durable = timed_durable(["sh", "-c", cmd])
            return dt, cpu, durable
        return run

    contenders = {}
    for key, path in BUILDS:
        contenders[key] = capwrap(key, path, "cw-" + key, ALL_KEPT)
    contenders["tee"] = shell("cat '%s' | tee '%s' >/dev/null" % (logf, out))
    contenders["cat"] = shell("cat '%s' > '%s'" % (logf, out))
    for key, path in BUILDS:
        contenders[key + "-default"] = capwrap(key, path, "cwd-" + key, ["--preview", "--keep", "always"])
    res = rounds(RUNS, contenders)
    for key, _ in BUILDS:
        if checked.get("cw-" + key) != "complete":
            sys.exit("%s did not keep the whole log (capture state %r)" % (key, checked.get("cw-" + key)))
    tee, cat = med(res["tee"], 0), med(res["cat"], 0)
    mbps = lambda s: "%.0f MB/s" % (MB * 1.048576 / s)
    cells = lambda f: {key: f(key) for key, _ in BUILDS}
    wall = lambda key: med(res[key], 0)
    t.add("%d MiB log, all kept: `capwrap -- cat LOG` vs `cat LOG \\| tee FILE >/dev/null`" % MB,
          cells(lambda k: ("%.3f s" % wall(k), wall(k) / tee, wall(k) / tee <= 0.9)), "%.3f s (%s)" % (tee, mbps(tee)), "<= 0.9 x")
    t.add("same, vs `cat LOG > FILE` (the floor: one copy)",
          cells(lambda k: ("%.3f s" % wall(k), wall(k) / cat, wall(k) / cat <= 2.5)), "%.3f s (%s)" % (cat, mbps(cat)), "<= 2.5 x")
    teed, catd = med(res["tee"], 2), med(res["cat"], 2)
    durable = lambda key: med(res[key], 2)
    t.add("same, to durable (run, then `sync`, inside the clock) vs tee's",
          cells(lambda k: ("%.3f s" % durable(k), durable(k) / teed, durable(k) / teed <= 0.9)), "%.3f s" % teed, "<= 0.9 x")
    t.add("same, to durable, vs `cat LOG > FILE; sync`",
          cells(lambda k: ("%.3f s" % durable(k), durable(k) / catd, durable(k) / catd <= 2.5)), "%.3f s" % catd, "<= 2.5 x")
    ct = med(res["tee"], 1)
    t.add("same, CPU time (user + system, `cat` included) vs tee's",
          cells(lambda k: ("%.3f s" % med(res[k], 1), med(res[k], 1) / ct if ct else None, None)), "%.3f s" % ct)
    t.add("%d MiB log, default limits (32 MiB kept, %s) vs tee" % (MB, checked.get("cwd-capwrap")),
          cells(lambda k: ("%.3f s" % med(res[k + "-default"], 0), med(res[k + "-default"], 0) / tee, None)), "%.3f s" % tee)
    t.add("peak RSS, %d MiB log (largest of the runs above)" % MB,
          cells(lambda k: ("%.1f MiB" % (max(rss[k]) / 1024), None, max(rss[k]) / 1024 < 32)), "", "< 32 MiB")
    for key, _ in BUILDS:
        shutil.rmtree(os.path.join(WORK, "cw-" + key), ignore_errors=True)
        shutil.rmtree(os.path.join(WORK, "cwd-" + key), ignore_errors=True)
    remove(out)
    if "rss10" in skip:
        return
    big = "for i in 1 2 3 4 5 6 7 8 9 10; do cat '%s'; done" % logf
    got = {}
    for key, path in BUILDS:
        d = fresh_dir("cw10")
        dt, r, _ = timed([path, "--dir", d] + ALL_KEPT + ["--", "sh", "-c", big])
        if capture_state(d) != "complete":
            sys.exit("%s did not keep the whole 10 x log (capture state %r)" % (key, capture_state(d)))
        got[key] = ("%.1f MiB (%.1f s)" % (r / 1024, dt), None, r / 1024 < 32)
        shutil.rmtree(d, ignore_errors=True)
    t.add("peak RSS, %d MiB (10 x log, all kept; its wall time)" % (10 * MB), got, "", "< 32 MiB")


def bench_smallwrites(t):
    writer = os.path.join(WORK, "smallwrites")
    subprocess.run(["go", "build", "-o", writer, "./bench/smallwrites"], cwd=ROOT, env=dict(ENV, CGO_ENABLED="0"), check=True)
    out = os.path.join(WORK, "out.file")

    def cw(path):
        def run():
            d = fresh_dir("sw")
            return timed([path, "--dir", d] + ALL_KEPT + ["--", writer])[0]
        return run

    def tee():
        remove(out)
        return timed(["sh", "-c", "'%s' | tee '%s' >/dev/null" % (writer, out)])[0]

    contenders = {key: cw(path) for key, path in BUILDS}
    contenders["tee"] = tee
    res = rounds(RUNS, contenders)
    te = med(res["tee"])
    t.add("1,000,000 writes of 20 bytes, all kept, vs tee",
          {key: ("%.3f s" % med(res[key]), med(res[key]) / te, None) for key, _ in BUILDS}, "%.3f s" % te)
    shutil.rmtree(os.path.join(WORK, "sw"), ignore_errors=True)
    remove(out)


def main():
    if not shutil.which("go"):
        sys.exit("bench.py needs go on PATH (it builds a hello-world and the redactor's benchmarks)")
    for key, path in BUILDS:
        if not os.access(path, os.X_OK):
            sys.exit("no %s binary at %s (make build)" % (key, path))
    start, load0 = time.time(), loadavg()
    version = lambda path: subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip() or "?"
    t = Table(BUILDS)
    redact_origin = "skipped"
    if "startup" not in SKIP:
        log("start-up: %d rounds ..." % STARTUP_RUNS)
        bench_startup(t)
    if "redact" not in SKIP:
        log("redactor: %d rounds of %s ..." % (REDACT_ROUNDS, REDACT_TIME))
        redact_origin = bench_redact(t)
    if "throughput" not in SKIP:
        logf = os.path.join(WORK, "bench.log")
        if not os.path.exists(logf) or os.path.getsize(logf) != MB << 20:
            log("generating a %d MiB log in %s ..." % (MB, WORK))
            gen_log(logf, MB << 20)
        log("throughput: %d rounds ..." % RUNS)
        bench_throughput(t, logf, SKIP)
    if "smallwrites" not in SKIP:
        log("small writes: %d rounds ..." % RUNS)
        bench_smallwrites(t)

    print(t.markdown())
    print()
    print("Medians of interleaved rounds (each contender first in turn): throughput and small writes %d rounds, "
          "each run after a sync; start-up %d rounds; redactor %d rounds of %s, -test.cpu 1." % (RUNS, STARTUP_RUNS, REDACT_ROUNDS, REDACT_TIME))
    print("%s UTC; %d cores, %s; %s; load average %s at the start, %s at the end; %.0f s." % (
        time.strftime("%Y-%m-%d %H:%M", time.gmtime(start)), os.cpu_count(), cpu_model(), go_version(), load0, loadavg(), time.time() - start))
    print("%s; bench.py at %s; redactor test binary %s; scratch %s." % (
        "; ".join("%s: %s (its --version: %s)" % (key, path, version(path)) for key, path in BUILDS),
        describe(ROOT), redact_origin, WORK))


if __name__ == "__main__":
    try:
        main()
    finally:  # also when a benchmark failed: no 150 MiB log left behind
        if not os.environ.get("BENCH_DIR"):
            shutil.rmtree(WORK, ignore_errors=True)
