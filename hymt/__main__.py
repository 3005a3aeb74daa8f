import sys

from hymt.cli import main

if __name__ == "__main__":  # also imported as __mp_main__ by the engine's spawned child process
    sys.exit(main())
