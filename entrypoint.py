#!/usr/bin/env python3
"""The container's entrypoint: run toolselect as the GitHub Action (inputs come from INPUT_*)."""

import sys

from toolselect.cli import main

if __name__ == "__main__":
    sys.exit(main(["action"], own_process=True))
