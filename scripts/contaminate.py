"""``lm-eval-contam contaminate`` as a script, for ``accelerate launch`` (data-parallel continued pre-training).

    accelerate launch scripts/contaminate.py --model Qwen/Qwen2.5-0.5B --partition ag_news:train --out models/qwen_tt
    python scripts/contaminate.py --partition toy_news:train --out models/toy_news_injected     # CPU, default model

Every flag is the subcommand's (``lm-eval-contam contaminate --help``).
"""

from __future__ import annotations

import sys

from lm_eval_contam.cli import main

if __name__ == "__main__":
    sys.exit(main(["contaminate", *sys.argv[1:]]))
