import sys

from lm_eval_contam.cli import main

sys.exit(main())
