"""The option-order tests on u at 24, 96 and 384 items from one scored pool (issue 49 item 4).

    python scripts/order_pool_study.py score [--out out_split_study]   # every order of 768 items, both models (resumes)
    python scripts/order_pool_study.py score --filler                   # the pool by the filler-only fine-tune
    python scripts/order_pool_study.py score --injected                 # the split study's 384 injected items
    python scripts/order_pool_study.py rates                            # rates from the shipped scores

``score`` scores every text of every pool doc (:mod:`lm_eval_contam.nullstudy.order_pool`) with the split study's
fine-tune (``<out>/model``, from ``scripts/split_control_study.py train``) and with the clean default model (its
reference), each item's shared lines once (:func:`lm_eval_contam.nullstudy.scoring.grouped_rolling_loglikelihoods`),
and appends one row per item to ``lm_eval_contam/nullstudy/scored/order_pool_<null|reference>.jsonl`` as it goes: a
stopped run resumes after the last row written. ``--injected`` scores the split study's injected items instead (its
4 multiple-choice ``train`` splits of 96, into ``order_injected_<model|reference>.jsonl``): the tests' detection.
``--filler`` scores the pool with the split study's filler-only fine-tune (``<out>/filler_model``, from
``split_control_study.py train --model filler``: the same recipe without the injected splits) into
``order_pool_filler.jsonl``: the null the design names, beside the injected fine-tune's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def score(out: Path, *, injected: bool = False, filler: bool = False) -> None:
    from tqdm.auto import tqdm

    from lm_eval_contam.core.jsonl import read_jsonl_objects, write_jsonl
    from lm_eval_contam.models.default_model import default_model_path
    from lm_eval_contam.nullstudy.order_pool import SCORED_DIR, pool_docs
    from lm_eval_contam.nullstudy.scoring import grouped_rolling_loglikelihoods, load_scorer
    from lm_eval_contam.nullstudy.validation import MODEL_DIRS

    from split_control_study import settings

    docs = pool_docs(settings().seed, injected=injected)
    null = ("filler", out / MODEL_DIRS["filler"]) if filler else ("null", out / MODEL_DIRS["injected"])
    for label, model_dir in (("injected", out / MODEL_DIRS["injected"]) if injected else null,
                             ("reference", default_model_path())):
        target = SCORED_DIR / (f"order_injected_{label}.jsonl" if injected else f"order_pool_{label}.jsonl")
        done = {row["identity"] for row in read_jsonl_objects(target)} if target.is_file() else set()
        todo = [doc for doc in docs if doc["identity"] not in done]
        if not todo:
            continue
        model, tokenizer, prefix = load_scorer(str(model_dir))
        started = time.perf_counter()
        for doc in tqdm(todo, desc=f"scoring {label}", unit="item"):
            values = grouped_rolling_loglikelihoods(model, tokenizer, prefix, doc["texts"])
            write_jsonl(target, [{key: value for key, value in doc.items() if key != "texts"}
                                 | {"scores": [round(v, 4) for v in values]}], append=True)
        print(f"{label}: {len(todo)} items in {time.perf_counter() - started:.0f} s -> {target}")


RATES_FILE = Path(__file__).resolve().parents[1] / "lm_eval_contam" / "verdicts" / "order_pool_rates.json"


def rates() -> None:
    from lm_eval_contam.nullstudy.order_pool import (
        SCORED_DIR,
        detection_rates,
        dumps,
        pool_rates,
        rates_document,
        rates_table,
        scored,
    )

    found = pool_rates(scored("null"), scored("reference"))
    clean = pool_rates(scored("reference"), None)
    filler = pool_rates(scored("filler"), scored("reference")) if (SCORED_DIR / "order_pool_filler.jsonl").is_file() else None
    document = rates_document(found, command="python scripts/order_pool_study.py rates", date=time.strftime("%Y-%m-%d"),
                              clean=clean, filler=filler)
    detection = detection_rates(scored("injected", prefix="order_injected"), scored("reference", prefix="order_injected"))
    RATES_FILE.write_text(dumps({**document, "detection": detection}), encoding="utf-8")
    print(rates_table(found))
    print(rates_table(clean))
    if filler is not None:
        print(rates_table(filler))
    print(json.dumps(detection, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("score", "rates"))
    parser.add_argument("--out", type=Path, default=Path("out_split_study"))
    parser.add_argument("--injected", action="store_true", help="score the split study's injected items")
    parser.add_argument("--filler", action="store_true", help="score the pool with the filler-only fine-tune")
    args = parser.parse_args()
    if args.step == "score":
        if args.injected and args.filler:
            parser.error("score: --injected or --filler, not both")
        score(args.out.resolve(), injected=args.injected, filler=args.filler)
    else:
        rates()


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    from lm_eval_contam.core.errors import ContamError

    try:
        main()
    except ContamError as error:
        print(f"order_pool_study.py: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
