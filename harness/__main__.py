# Signal handlers before anything heavy is imported: a Ctrl-C in the first milliseconds
# still ends with a receipt and exit 130, never a traceback. (Before this file runs,
# Python's own start-up is Python's: a Ctrl-C there is not ours to catch.)
import sys

try:
    from harness.interrupt import Interrupted, install, stopped

    install()
except KeyboardInterrupt:  # during the few lines above: no import may be relied on
    if next((a for a in sys.argv[1:] if not a.startswith("-")), None) == "run":
        note = "interrupted by SIGINT before the run started; nothing was written"
        sys.stdout.write('{"wroteJudge": false, "upToDate": false, "note": "' + note + '"}\n')
    sys.stderr.write("judge: interrupted by SIGINT\n")
    sys.exit(130)

try:
    from harness.cli import entry
except (Interrupted, KeyboardInterrupt) as exc:
    sys.exit(stopped(exc, sys.argv[1:]))
except Exception as exc:  # a signal inside a class body comes out wrapped (interrupt.within)
    from harness.interrupt import within

    signalled = within(exc)
    if signalled is None:
        raise
    sys.exit(stopped(signalled, sys.argv[1:]))

entry()
