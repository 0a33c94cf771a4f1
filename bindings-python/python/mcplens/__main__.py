"""The `mcplens` command line (`mcplens …` after `pip install mcplens`, or `python -m mcplens …`).

The command runs in the native module, the same as the `mcplens` binary of the Rust CLI.
"""

import signal
import sys

from mcplens._core import cli_main


def main() -> None:
    # Ctrl-C ends the command as it ends the binary: the Rust code runs without the GIL, so a
    # Python handler would only run once the command (say, `events serve`) returned.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(cli_main(["mcplens", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
