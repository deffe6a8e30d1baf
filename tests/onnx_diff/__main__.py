"""`python -m onnx_diff`: see `campaign.parse_args` or `scripts/onnx-diff --help`."""

import sys

from .campaign import main

sys.exit(main())
