"""``python -m kgrag.cli``: the same command line as ``kgrag``."""

from kgrag.cli import main

if __name__ == "__main__":
    main()
