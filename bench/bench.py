#!/usr/bin/env python3
"""capwrap's end-to-end benchmark (issue 8, SPEC §9): `make bench`.

Generates its inputs (nothing large is committed), then measures, alternating
capwrap and the baselines in the same run (each one first in turn, and every
run after a sync, so none pays for the writeback of another):

  throughput  capwrap -- cat LOG  vs  cat LOG | tee FILE >/dev/null  vs  cat LOG > FILE
              (preview mode, redaction on, limits raised so every byte is persisted;
              and once more with the default limits)
  memory      peak RSS of capwrap for LOG and for 10 x LOG
  start-up    capwrap -- true  minus  true, median of 50; and the watchdog helper alone
  small writes  1,000,000 writes of 20 bytes: capwrap vs tee

Environment: BENCH_MB (size of LOG, default 500), BENCH_RUNS (default 5),
BENCH_DIR (scratch directory, default a new one under /tmp), CAPWRAP (binary,
default ./capwrap). Prints a Markdown table of medians and ratios.
"""
import os, resource, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAPWRAP = os.path.abspath(os.environ.get("CAPWRAP", os.path.join(ROOT, "capwrap")))
MB = int(os.environ.get("BENCH_MB", "500"))
RUNS = int(os.environ.get("BENCH_RUNS", "5"))
WORK = os.environ.get("BENCH_DIR") or tempfile.mkdtemp(prefix="capwrap-bench-")
os.makedirs(WORK, exist_ok=True)
RAISED = ["--max-capture-bytes", "64G", "--dir-quota", "256G"]


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
    with open(path, "wb") as f:
        written = 0
        while written < size:
            n = min(len(block), size - written)
            f.write(block[:n])
            written += n


def timed(cmd, shell=False, stdin=None):
    """Wall time in seconds and peak RSS in KiB of one run (wait4 rusage).

    Dirty pages of earlier runs are written back first (sync), so that no
    run pays for the writeback of the one before it."""
    os.sync()
    t = time.perf_counter()
    p = subprocess.Popen(cmd, shell=shell, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("benchmark command failed: %r" % (cmd,))
    return dt, ru.ru_maxrss


def fresh_dir(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def main():
    if not os.access(CAPWRAP, os.X_OK):
        sys.exit("no capwrap binary at %s (make build)" % CAPWRAP)
    log = os.path.join(WORK, "bench.log")
    if not os.path.exists(log) or os.path.getsize(log) != MB << 20:
        print("generating %d MiB log in %s ..." % (MB, WORK), file=sys.stderr)
        gen_log(log, MB << 20)
    out = os.path.join(WORK, "out.file")
    rows = []

    # Throughput, alternating, limits raised so every byte is persisted.
    res = {"capwrap": [], "tee": [], "cat": []}
    rss = []
    def run_capwrap():
        d = fresh_dir("to")
        dt, r = timed([CAPWRAP, "--dir", d, "--keep", "never"] + RAISED + ["--", "cat", log])
        res["capwrap"].append(dt)
        rss.append(r)

    def run_tee():
        res["tee"].append(timed("cat %s | tee %s >/dev/null" % (log, out), shell=True)[0])

    def run_cat():
        res["cat"].append(timed("cat %s > %s" % (log, out), shell=True)[0])

    order = [run_capwrap, run_tee, run_cat]
    for i in range(RUNS):
        for f in order[i % 3:] + order[:i % 3]:  # each goes first in turn
            f()
    med = {k: statistics.median(v) for k, v in res.items()}
    rows.append(("%d MiB log, capwrap -- cat (every byte persisted)" % MB, "%.3f s" % med["capwrap"],
                 "%.2f x tee, %.2f x cat>file" % (med["capwrap"] / med["tee"], med["capwrap"] / med["cat"]), "<= 1.00 x tee"))
    rows.append(("%d MiB log, cat LOG piped to tee FILE" % MB, "%.3f s" % med["tee"], "%.0f MB/s" % (MB * 1.048576 / med["tee"]), ""))
    rows.append(("%d MiB log, cat > FILE" % MB, "%.3f s" % med["cat"], "%.0f MB/s" % (MB * 1.048576 / med["cat"]), ""))
    rows.append(("peak RSS, %d MiB" % MB, "%.1f MiB" % (max(rss) / 1024), "", "< 32 MiB"))

    # Default limits (32 MiB per capture): persistence stops, draining goes on.
    dflt = []
    for i in range(RUNS):
        d = fresh_dir("to")
        dflt.append(timed([CAPWRAP, "--dir", d, "--keep", "never", "--", "cat", log])[0])
    rows.append(("%d MiB log, default limits (32 MiB kept)" % MB, "%.3f s" % statistics.median(dflt),
                 "%.2f x tee" % (statistics.median(dflt) / med["tee"]), ""))

    # Memory flat as output grows: 10 x LOG through capwrap, persisted.
    d = fresh_dir("to")
    big = "for i in 1 2 3 4 5 6 7 8 9 10; do cat %s; done" % log
    dt, r = timed([CAPWRAP, "--dir", d, "--keep", "never"] + RAISED + ["--", "sh", "-c", big])
    rows.append(("peak RSS, %d MiB (10 x log, persisted)" % (10 * MB), "%.1f MiB" % (r / 1024), "%.2f s" % dt, "< 32 MiB"))
    shutil.rmtree(d, ignore_errors=True)

    # Start-up: capwrap -- true minus true, median of 50 each, alternating.
    d = fresh_dir("to")
    cw, tr = [], []
    for i in range(50):
        cw.append(timed([CAPWRAP, "--dir", d, "--", "true"])[0])
        tr.append(timed(["true"])[0])
    rows.append(("start-up: capwrap -- true minus true", "%.2f ms" % ((statistics.median(cw) - statistics.median(tr)) * 1000),
                 "true alone %.2f ms" % (statistics.median(tr) * 1000), "< 3 ms"))
    # The watchdog helper on its own (SPEC section 3): what starting it costs,
    # run as capwrap starts it, reading end of file at once.
    wd = []
    for i in range(50):
        wd.append(timed([CAPWRAP, "__capwrap-watchdog", "5s"], stdin=subprocess.DEVNULL)[0])
        tr.append(timed(["true"])[0])
    rows.append(("watchdog helper alone (part of the start-up above)", "%.2f ms" % ((statistics.median(wd) - statistics.median(tr)) * 1000),
                 "started beside the command, not waited for", ""))

    # Many small writes: 1,000,000 writes of 20 bytes.
    writer = os.path.join(WORK, "smallwrites")
    subprocess.run(["go", "build", "-o", writer, os.path.join(ROOT, "bench", "smallwrites")], check=True, cwd=ROOT)
    sw_c, sw_t = [], []
    for i in range(RUNS):
        d = fresh_dir("to")
        if i % 2:
            sw_t.append(timed("%s | tee %s >/dev/null" % (writer, out), shell=True)[0])
        sw_c.append(timed([CAPWRAP, "--dir", d, "--keep", "never"] + RAISED + ["--", writer])[0])
        if not i % 2:
            sw_t.append(timed("%s | tee %s >/dev/null" % (writer, out), shell=True)[0])
    rows.append(("1,000,000 writes of 20 bytes, capwrap", "%.3f s" % statistics.median(sw_c),
                 "%.2f x tee" % (statistics.median(sw_c) / statistics.median(sw_t)), ""))
    rows.append(("1,000,000 writes of 20 bytes, tee", "%.3f s" % statistics.median(sw_t), "", ""))

    print("| measure | median | ratio / note | target |")
    print("|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s |" % r)
    print("\n%d runs each, alternating; %s; %d cores; %s" % (RUNS, time.strftime("%Y-%m-%d"), os.cpu_count(), WORK), file=sys.stderr)
    if not os.environ.get("BENCH_DIR"):
        shutil.rmtree(WORK, ignore_errors=True)


if __name__ == "__main__":
    main()
