#!/usr/bin/env python3
"""capwrap's benchmark against the targets of SPEC section 9: `make bench`.

One run prints one Markdown table (medians, ratios, targets) and, under it,
the machine it ran on. Inputs are generated into a scratch directory (nothing
large is committed); needs python3 and go only.

  throughput  capwrap --preview --keep always --max-capture-bytes 0 --dir-quota 0
              -- cat LOG   vs   cat LOG | tee FILE >/dev/null   vs   cat LOG > FILE
              (preview mode, redaction on, every byte kept; LOG is a 150 MiB
              pytest/compiler-style log); and capwrap with its default limits
  memory      peak RSS of capwrap for LOG (the runs above) and for 10 x LOG
  start-up    capwrap -- true   vs   a Go hello-world built here with the same
              toolchain   vs   true
  redactor    BenchmarkWriterPlainLog and BenchmarkWriterNoSecrets of
              redact/bench_test.go, one core (-test.cpu 1), MB/s
  small writes  1,000,000 writes of 20 bytes: capwrap vs tee

Interleaved: in every round each contender goes first in turn (rotation), so
a slow minute of this shared machine hits all of them; medians are reported.
Every throughput run starts after a sync, and with its output file or
capture directory removed, so none pays for the writeback or the freeing of
another's 150 MiB. The capture is kept (--keep always), as tee and cat keep
FILE: removing it would add capwrap's unlink of 150 MiB to its time only.

Environment:
  CAPWRAP             capwrap binary (default ./capwrap)
  BENCH_MB            size of LOG in MiB (default 150; SPEC: 150 to 500 MB)
  BENCH_RUNS          throughput and small-write rounds (default 7)
  BENCH_STARTUP_RUNS  start-up rounds (default 60)
  BENCH_REDACT_ROUNDS redactor rounds (default 5)
  BENCH_REDACT_TIME   -test.benchtime of each redactor round (default 1s)
  BENCH_REDACT_TEST   a prebuilt redact test binary (go test -c ./redact)
  BENCH_SRC           checkout to build that binary from (default this one)
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
    def __init__(self):
        self.rows = []

    def add(self, measure, capwrap, reference="", ratio=None, target="", met=None):
        if ratio is None:
            r = ""
        else:
            r = "%.2f x" % ratio
        m = "" if met is None else ("yes" if met else "**no**")
        self.rows.append((measure, capwrap, reference, r, target, m))

    def markdown(self):
        out = ["| measure | capwrap | reference | ratio | target | met? |", "|---|---|---|---|---|---|"]
        for r in self.rows:
            out.append("| %s |" % " | ".join(r))
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


def bench_startup(t):
    hello = build_hello()
    d = fresh_dir("startup")
    contenders = {
        "capwrap": lambda: timed([CAPWRAP, "--dir", d, "--", "true"], sync=False),
        "hello": lambda: timed([hello], sync=False),
        "true": lambda: timed(["true"], sync=False),
    }
    rounds(5, contenders)  # warm-up: page cache, binaries mapped
    res = rounds(STARTUP_RUNS, contenders)
    c, h, tr = med(res["capwrap"], 0), med(res["hello"], 0), med(res["true"], 0)
    t.add("start-up: `capwrap -- true` vs Go hello-world (median of %d)" % STARTUP_RUNS,
          "%.2f ms" % (c * 1e3), "%.2f ms" % (h * 1e3), c / h, "<= 1.5 x", c / h <= 1.5)
    t.add("start-up above `true` (%.2f ms): capwrap vs hello-world" % (tr * 1e3),
          "%.2f ms" % ((c - tr) * 1e3), "%.2f ms" % ((h - tr) * 1e3), (c - tr) / (h - tr) if h > tr else None)
    c, h = med(res["capwrap"], 2), med(res["hello"], 2)
    t.add("start-up, CPU time (user + system, the command's included)", "%.2f ms" % (c * 1e3), "%.2f ms" % (h * 1e3), c / h if h else None)


def redact_test_binary():
    if REDACT_TEST:
        return os.path.abspath(REDACT_TEST), REDACT_TEST
    out = os.path.join(WORK, "redact.test")
    env = dict(ENV, CGO_ENABLED="0")
    subprocess.run(["go", "test", "-c", "-trimpath", "-o", out, "./redact"], cwd=SRC, env=env, check=True)
    return out, "built from %s (%s)" % (SRC, describe(SRC))


def bench_redact(t):
    binary, origin = redact_test_binary()
    names = ["BenchmarkWriterPlainLog", "BenchmarkWriterNoSecrets"]
    pat = re.compile(r"^(Benchmark\w+?)(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) MB/s")
    res = {n: [] for n in names}
    for i in range(REDACT_ROUNDS):
        k = i % len(names)
        for name in names[k:] + names[:k]:
            r = subprocess.run([binary, "-test.run", "^$", "-test.bench", "^%s$" % name, "-test.cpu", "1",
                                "-test.benchtime", REDACT_TIME, "-test.count", "1"],
                               capture_output=True, text=True, env=ENV, cwd=WORK)
            got = [m for m in (pat.match(l) for l in r.stdout.splitlines()) if m and m.group(1) == name]
            if r.returncode != 0 or not got:
                sys.exit("redactor benchmark %s failed:\n%s%s" % (name, r.stdout, r.stderr))
            res[name].append(float(got[0].group(2)))
    p, n = med(res[names[0]]), med(res[names[1]])
    t.add("redactor alone, one core, plain log (`BenchmarkWriterPlainLog`)", "%.0f MB/s" % p, "", None, ">= 1000 MB/s", p >= 1000)
    t.add("redactor alone, one core, keyword-dense log (`BenchmarkWriterNoSecrets`)", "%.0f MB/s" % n, "", None, ">= 600 MB/s", n >= 600)
    return origin


def bench_throughput(t, logf, skip):
    out = os.path.join(WORK, "out.file")
    rss = []
    checked = {}

    def capwrap(name, flags):
        def run():
            remove(out)
            d = fresh_dir(name)
            dt, r, cpu = timed([CAPWRAP, "--dir", d] + flags + ["--", "cat", logf])
            rss.append(r)
            if name not in checked:  # the first run of each: did it keep what it should?
                checked[name] = capture_state(d)
            return dt, cpu
        return run

    def shell(cmd):
        def run():
            remove(out)
            dt, _, cpu = timed(["sh", "-c", cmd])
            return dt, cpu
        return run

    contenders = {
        "capwrap": capwrap("cw", ALL_KEPT),
        "tee": shell("cat '%s' | tee '%s' >/dev/null" % (logf, out)),
        "cat": shell("cat '%s' > '%s'" % (logf, out)),
        "default": capwrap("cwd", ["--preview", "--keep", "always"]),
    }
    res = rounds(RUNS, contenders)
    if checked.get("cw") != "complete":
        sys.exit("capwrap did not keep the whole log (capture state %r)" % checked.get("cw"))
    c, tee, cat, dflt = (med(res[k], 0) for k in ("capwrap", "tee", "cat", "default"))
    mbps = lambda s: "%.0f MB/s" % (MB * 1.048576 / s)
    t.add("%d MiB log, all kept: `capwrap -- cat LOG` vs `cat LOG \\| tee FILE >/dev/null`" % MB,
          "%.3f s" % c, "%.3f s (%s)" % (tee, mbps(tee)), c / tee, "<= 0.9 x", c / tee <= 0.9)
    t.add("same, vs `cat LOG > FILE` (the floor: one copy)", "%.3f s" % c, "%.3f s (%s)" % (cat, mbps(cat)), c / cat, "<= 2.5 x", c / cat <= 2.5)
    cc, ct = med(res["capwrap"], 1), med(res["tee"], 1)
    t.add("same, CPU time (user + system, `cat` included) vs tee's", "%.3f s" % cc, "%.3f s" % ct, cc / ct if ct else None)
    t.add("%d MiB log, default limits (32 MiB kept, %s) vs tee" % (MB, checked.get("cwd")), "%.3f s" % dflt, "%.3f s" % tee, dflt / tee)
    peak = max(rss) / 1024
    t.add("peak RSS, %d MiB log (largest of the runs above)" % MB, "%.1f MiB" % peak, "", None, "< 32 MiB", peak < 32)
    shutil.rmtree(os.path.join(WORK, "cw"), ignore_errors=True)
    shutil.rmtree(os.path.join(WORK, "cwd"), ignore_errors=True)
    remove(out)
    if "rss10" in skip:
        return
    d = fresh_dir("cw10")
    big = "for i in 1 2 3 4 5 6 7 8 9 10; do cat '%s'; done" % logf
    dt, r, _ = timed([CAPWRAP, "--dir", d] + ALL_KEPT + ["--", "sh", "-c", big])
    if capture_state(d) != "complete":
        sys.exit("capwrap did not keep the whole 10 x log (capture state %r)" % capture_state(d))
    t.add("peak RSS, %d MiB (10 x log, all kept, %.1f s)" % (10 * MB, dt), "%.1f MiB" % (r / 1024), "", None, "< 32 MiB", r / 1024 < 32)
    shutil.rmtree(d, ignore_errors=True)


def bench_smallwrites(t):
    writer = os.path.join(WORK, "smallwrites")
    subprocess.run(["go", "build", "-o", writer, "./bench/smallwrites"], cwd=ROOT, env=dict(ENV, CGO_ENABLED="0"), check=True)
    out = os.path.join(WORK, "out.file")

    def cw():
        d = fresh_dir("sw")
        return timed([CAPWRAP, "--dir", d] + ALL_KEPT + ["--", writer])[0]

    def tee():
        remove(out)
        return timed(["sh", "-c", "'%s' | tee '%s' >/dev/null" % (writer, out)])[0]

    res = rounds(RUNS, {"capwrap": cw, "tee": tee})
    c, te = med(res["capwrap"]), med(res["tee"])
    t.add("1,000,000 writes of 20 bytes, all kept, vs tee", "%.3f s" % c, "%.3f s" % te, c / te)
    shutil.rmtree(os.path.join(WORK, "sw"), ignore_errors=True)
    remove(out)


def main():
    if not os.access(CAPWRAP, os.X_OK):
        sys.exit("no capwrap binary at %s (make build)" % CAPWRAP)
    start, load0 = time.time(), loadavg()
    version = subprocess.run([CAPWRAP, "--version"], capture_output=True, text=True).stdout.strip()
    t = Table()
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
    print("capwrap: %s (its --version: %s); bench.py at %s; redactor test binary %s; scratch %s." % (
        CAPWRAP, version or "?", describe(ROOT), redact_origin, WORK))
    if not os.environ.get("BENCH_DIR"):
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
