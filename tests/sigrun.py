#!/usr/bin/env python3
"""sigrun.py — interrupt a command while it writes its output (tests/t_35_outputs.sh).

  python3 tests/sigrun.py SIGNAL GLOB CMD [ARGS...]

Starts CMD with SIGINT/SIGTERM at their defaults (a background job of a
non-interactive shell would have them ignored, and kvio keeps an ignored signal
ignored), waits until a file matching GLOB exists (the command's temp file:
it is in the middle of its run), sends SIGNAL (INT or TERM), then SIGCONT (for
a command stopped by KVIO_TEST_STOP_AT), and prints how CMD ended: its exit
status, or "signal N" when the signal killed it. The command must still be
running when the file appears: give it an input that keeps it busy (a FIFO
held open) or KVIO_TEST_STOP_AT. Prints "timeout" after 60 s without the file.
"""
import glob, os, signal, subprocess, sys, time


def main():
    sig = getattr(signal, 'SIG' + sys.argv[1])
    pattern, cmd = sys.argv[2], sys.argv[3:]

    def defaults():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    p = subprocess.Popen(cmd, preexec_fn=defaults)
    t0 = time.monotonic()
    while not glob.glob(pattern):
        if p.poll() is not None:
            print('ended before its temp file was seen: %d' % p.returncode)
            return
        if time.monotonic() - t0 > 60:
            p.kill()
            p.wait()
            print('timeout')
            return
        time.sleep(0.01)
    p.send_signal(sig)
    p.send_signal(signal.SIGCONT)
    rc = p.wait()
    print('signal %d' % -rc if rc < 0 else rc)


main()
