"""The option-order tests on u at 24, 96 and 384 items, from one scored pool (issue 49 item 4), without the models.

The pool: 768 multiple-choice items no model of the study was trained on, in two halves of 384 —
``authored``: the study's fresh items written after the default model's cutoff, options in their authors' order
(``fresh/mc_*.jsonl``), and ``random``: the split study's never-injected ``pool`` items of its four multiple-choice
datasets, options in a random order (96 of each). Each item becomes the option-order task's own doc
(:func:`lm_eval_contam.methods.optionorder.task.item_doc`: the audit's orders, every admissible one) rendered as
``audit --tasks`` renders a multiple-choice benchmark, and every text of it is scored once by the null fine-tune and
by its reference (``scripts/order_pool_study.py score``; one row per item, appended as it is scored).

Two null fine-tunes score it, each against the clean default model it was fine-tuned from as its reference. The
split study's injected fine-tune of the default model at the papers' strength (its corpus, filler, lr 5e-5, 3
epochs; ``null``) was trained on other items of the same kind (the study's multiple-choice ``train`` splits) and on
none of these: a model that learned other multiple-choice benchmarks. Its filler-only fine-tune (the same recipe
without the injected splits; ``filler``) saw no multiple-choice item at all: the null the design names.

Rates (:func:`pool_rates`): for each half and for both halves together, at each size, every partition tested as the
audit tests one (:func:`lm_eval_contam.methods.optionorder.verdicts.reference_arrangement_results`): ``draws`` seeded
partitions drawn from the pool (without replacement within a partition) and the pool cut into disjoint partitions.
Draws overlap, so the rate over draws estimates the level on this pool with the draws' (Monte-Carlo) interval, narrower
than a new pool's would be; the disjoint partitions are independent, few, and carry the honest interval.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lm_eval_contam.audit.benchmark_partitions import BENCHMARK_SAMPLE
from lm_eval_contam.core.jsonl import read_jsonl_objects
from lm_eval_contam.core.seeding import rng_for
from lm_eval_contam.core.split_tests import rate_entry
from lm_eval_contam.core.stats import ALPHA
from lm_eval_contam.kit.option_items import item_from_row
from lm_eval_contam.methods.optionorder.orders import DEFAULT_ARRANGEMENTS, DEFAULT_ORDERS, answer_index
from lm_eval_contam.methods.optionorder.stats import order_statistics, original_rank
from lm_eval_contam.methods.optionorder.task import item_doc
from lm_eval_contam.methods.optionorder.verdicts import reference_arrangement_results
from lm_eval_contam.nullstudy.corpus import make_mc_dataset, render_mc
from lm_eval_contam.nullstudy.validation import FRESH_DIR, render_question

SCORED_DIR = Path(__file__).with_name("scored")
HALVES = ("authored", "random")
HALF_ROWS = 384
RANDOM_DATASETS, RANDOM_SPLIT = 4, "pool"  # the split study's multiple-choice datasets and their never-injected split
RANDOM_SPLIT_ROWS = 250  # that split's size in the split study (its seeded rows depend on it)
SIZES = (24, 96, 384)
DRAWS = 200
ORDER_SEED = 0  # the audit's default seed: the pool's orders are those an audit would score


def pool_rows(study_seed: int) -> Iterator[tuple[str, str, int, str, Mapping[str, Any]]]:
    """(half, dataset, row number, rendered item, row) of every pool item, authored half first; each rendered as its
    study renders it for ``audit --tasks``."""
    for path in sorted(FRESH_DIR.glob("mc_*.jsonl")):
        for number, row in enumerate(read_jsonl_objects(path)):
            yield "authored", path.stem, number, render_question(row["question"], row["choices"]), row
    from lm_eval_contam.nullstudy.study import _vocabulary

    nouns, adjectives = _vocabulary()
    per_dataset = HALF_ROWS // RANDOM_DATASETS
    for index in range(RANDOM_DATASETS):
        dataset = make_mc_dataset(study_seed, index, nouns, adjectives, rows_per_split=RANDOM_SPLIT_ROWS,
                                  splits=(RANDOM_SPLIT,))
        for number, row in enumerate(dataset.splits[RANDOM_SPLIT][:per_dataset]):
            yield "random", dataset.display_name, number, render_mc(row), row


INJECTED_SPLIT, INJECTED_ROWS = "train", 96  # the split study's injected split of each multiple-choice dataset


def injected_rows(study_seed: int) -> Iterator[tuple[str, str, int, str, Mapping[str, Any]]]:
    """(half ``injected``, dataset, row number, rendered item, row) of the split study's injected items: the ``train``
    split of each of its multiple-choice datasets, in the order and rendering its fine-tune saw them."""
    from lm_eval_contam.nullstudy.study import _vocabulary

    nouns, adjectives = _vocabulary()
    for index in range(RANDOM_DATASETS):
        dataset = make_mc_dataset(study_seed, index, nouns, adjectives, rows_per_split=INJECTED_ROWS,
                                  splits=(INJECTED_SPLIT,))
        for number, row in enumerate(dataset.splits[INJECTED_SPLIT]):
            yield "injected", dataset.display_name, number, render_mc(row), row


def pool_docs(study_seed: int, *, injected: bool = False) -> list[dict[str, Any]]:
    """Every pool item (``injected``: every injected item instead) as the option-order task's doc with every
    admissible order (``all_orders``), plus its half."""
    docs = []
    for half, dataset, number, text, row in (injected_rows if injected else pool_rows)(study_seed):
        item = item_from_row({"text": text, "choices": row["choices"]})
        identity = f"{dataset}:{number}"
        doc = item_doc(item, identity, answer_index(item, row["answer"]), orders=DEFAULT_ORDERS,
                       arrangements=DEFAULT_ARRANGEMENTS, seed=ORDER_SEED, all_orders=True)
        if doc is not None:
            docs.append({"half": half, **doc})
    return docs


def scored(label: str, directory: Path = SCORED_DIR, *, prefix: str = "order_pool") -> list[dict[str, Any]]:
    """One model's shipped per-item scores (``null``, ``filler`` or ``reference``; with ``prefix="order_injected"``, the injected
    items' ``injected`` or ``reference``): the doc's fields and ``scores``."""
    return read_jsonl_objects(directory / f"{prefix}_{label}.jsonl")


def _draw(records: Sequence[Mapping[str, Any]], size: int, draw: int, *identity: object) -> list[Mapping[str, Any]]:
    chosen = rng_for(draw, "order-pool-study", *identity).permutation(len(records))[:size]
    return [records[int(index)] for index in sorted(chosen)]


def _disjoint(records: Sequence[Mapping[str, Any]], size: int, *identity: object) -> list[list[Mapping[str, Any]]]:
    """The pool cut into as many disjoint partitions of ``size`` as it holds (one seeded shuffle)."""
    order = rng_for(0, "order-pool-disjoint", *identity).permutation(len(records))
    return [[records[int(index)] for index in sorted(order[start:start + size])]
            for start in range(0, len(records) - size + 1, size)]


def flag_count(flags: Sequence[bool]) -> dict[str, Any]:
    """Partitions flagged of those tested, with the rate and its 95 % Clopper-Pearson interval (a rates file's entry)."""
    return rate_entry(sum(flags), len(flags))


def ranked(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The records with the rank test's fields as the task logs them (``rank`` of the original among the
    ``rank_orders`` first texts, ties broken as the audit breaks them; ``orders``)."""
    return [{**record, "orders": int(record["rank_orders"]),
             "rank": original_rank(record["scores"][0], record["scores"][1:int(record["rank_orders"])],
                                   seed=ORDER_SEED, identity=str(record["identity"]))} for record in records]


OWN_TESTS = ("option_order", "option_order_arrangement")  # the tests on the model's own scores (no reference)


def _pvalues(partitions: Sequence[Sequence[Mapping[str, Any]]], reference: Mapping[str, Mapping[str, Any]] | None,
             label: str) -> dict[str, list[float]]:
    """Each option-order test's p-value on each partition, as the audit computes it: the rank and arrangement tests
    on the model's own scores, and (given the reference's records) the tests on u."""
    found: dict[str, list[float]] = {}
    for number, partition in enumerate(partitions):
        own = order_statistics(ranked(partition), seed=number, name=f"{label}:{number}")
        found.setdefault("option_order", []).append(own.rank.pvalue)
        if own.arrangement is not None:
            found.setdefault("option_order_arrangement", []).append(own.arrangement.pvalue)
        for test, (result, _, _) in (reference_arrangement_results(
                partition, reference, seed=number, label=f"{label}:{number}", source="order pool reference").items()
                if reference is not None else ()):
            found.setdefault(test, []).append(result.pvalue)
    return found


def pool_rates(null: Sequence[Mapping[str, Any]], reference: Sequence[Mapping[str, Any]] | None, *,
               sizes: Sequence[int] = SIZES, draws: int = DRAWS) -> dict[str, Any]:
    """test -> pool ("authored", "random", "both") -> size -> the rejection rate at ALPHA: ``over_draws`` (``draws``
    overlapping seeded partitions: the level's estimate on this pool, with the draws' interval) and ``disjoint``
    (the pool cut into disjoint partitions: independent ones, with their interval); at the pool's own size, the one
    partition it is and its p-value. ``reference`` None: only the tests on the model's own scores (the clean
    model's own rates)."""
    theirs = {str(record["identity"]): record for record in reference} if reference is not None else None
    pools = {half: [r for r in null if r["half"] == half] for half in HALVES}
    pools["both"] = list(null)
    found: dict[str, Any] = {}
    for name, records in pools.items():
        for size in (size for size in sizes if size <= len(records)):
            label = f"order-pool:{name}:{size}"
            disjoint = _pvalues(_disjoint(records, size, name, size), theirs, f"{label}:disjoint")
            drawn = (_pvalues([_draw(records, size, draw, name, size) for draw in range(draws)], theirs, label)
                     if size < len(records) else {})
            for test, values in disjoint.items():
                entry: dict[str, Any] = {"disjoint": flag_count([p <= ALPHA for p in values])}
                if test in drawn:
                    entry["over_draws"] = flag_count([p <= ALPHA for p in drawn[test]])
                else:
                    entry["pvalue"] = round(values[0], 6)
                found.setdefault(test, {}).setdefault(name, {})[str(size)] = entry
    return found


def detection_rates(injected: Sequence[Mapping[str, Any]], reference: Sequence[Mapping[str, Any]], *,
                    sizes: Sequence[int] = (BENCHMARK_SAMPLE, INJECTED_ROWS), draws: int = DRAWS) -> dict[str, Any]:
    """test -> size -> how many of the injected partitions (one per dataset) each option-order test on u flags: at
    their own size every item (``seeded``), below it the mean over ``draws`` seeded draws per partition
    (``mean_over_draws``: overlapping, so k stays the partitions')."""
    theirs = {str(record["identity"]): record for record in reference}
    partitions: dict[str, list[Mapping[str, Any]]] = {}
    for record in injected:
        partitions.setdefault(str(record["identity"]).rsplit(":", 1)[0], []).append(record)
    found: dict[str, Any] = {}
    for size in sizes:
        label = f"order-injected:{size}"
        if size >= INJECTED_ROWS:
            for test, values in _pvalues(list(partitions.values()), theirs, label).items():
                found.setdefault(test, {})[str(size)] = {"seeded": flag_count([p <= ALPHA for p in values])}
            continue
        flagged: dict[str, float] = {}
        for name, records in partitions.items():
            drawn = _pvalues([_draw(records, size, draw, name, size) for draw in range(draws)], theirs,
                             f"{label}:{name}")
            for test, values in drawn.items():
                flagged[test] = flagged.get(test, 0.0) + sum(p <= ALPHA for p in values) / draws
        for test, mean in flagged.items():
            found.setdefault(test, {})[str(size)] = {"mean_over_draws": {**rate_entry(mean, len(partitions)),
                                                                         "draws_per_partition": draws}}
    return found


def _cell(entry: Mapping[str, Any]) -> str:
    disjoint = entry["disjoint"]
    own = f"{disjoint['flagged']}/{disjoint['k']} disjoint"
    if "over_draws" not in entry:
        return f"{own} (p = {entry['pvalue']:.4f})"
    drawn = entry["over_draws"]
    return (f"{100 * drawn['rate']:.1f} % over {drawn['k']} draws ({100 * drawn['ci'][0]:.1f}–"
            f"{100 * drawn['ci'][1]:.1f} %); {own}")


def rates_table(found: Mapping[str, Any]) -> str:
    """The rates as the docs print them (markdown)."""
    lines = ["| test | pool | 24 | 96 | 384 |", "|---|---|---|---|---|"]
    for test, pools in found.items():
        for name, sizes in pools.items():
            cells = [_cell(sizes[str(size)]) if str(size) in sizes else "—" for size in SIZES]
            lines.append(f"| `{test}` | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


SHAPE_OF_HALF = {"authored": "fresh multiple choice", "random": "multiple choice"}  # the verdicts' shape keys


def _columns(column: str, pools: Mapping[str, Any]) -> dict[str, Any]:
    """One null's rates of one test as a rates source reads them: over 24-item draws (the audit's size) of both
    halves under ``column``, and per half as a shape under ``by_shape``."""
    return {column: pools["both"][str(BENCHMARK_SAMPLE)]["over_draws"],
            "by_shape": {SHAPE_OF_HALF[half]: {column: pools[half][str(BENCHMARK_SAMPLE)]["over_draws"]}
                         for half in HALVES}}


def rates_document(found: Mapping[str, Any], *, command: str, date: str, clean: Mapping[str, Any] | None = None,
                   filler: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The rates as a rates source reads them (the validation rates' shape, column ``false_positive_pool``): each
    test's rate over 24-item draws (the audit's size) of both halves, and per half as a shape; every size beside.

    The draws overlap, so their interval is narrower than a new pool's would be: it can only withhold a test's call
    (a rate above its level), which is the direction a wrong reading of it costs least. ``clean``: the tests on the
    reference's (the clean default model's) own scores at every size (``clean_model_sizes``), shown beside.
    ``filler``: the same pool scored by the filler-only fine-tune against the same reference (column
    ``false_positive_pool_filler``, every size under ``filler_sizes``): the null the design names for a test that
    differences a fine-tune with its reference. Both columns are rate sources: a test over its level on either makes
    no call."""
    methods: dict[str, Any] = {}
    for column, rates in (("false_positive_pool", found), ("false_positive_pool_filler", filler or {})):
        for test, pools in rates.items():
            entry = methods.setdefault(test, {"by_shape": {}, "largest_n": BENCHMARK_SAMPLE})
            columns = _columns(column, pools)
            entry[column] = columns[column]
            for shape, cell in columns["by_shape"].items():
                entry["by_shape"].setdefault(shape, {}).update(cell)
    return {"version": 1, "confidence_level": 0.95, "command": command, "date": date, "methods": methods,
            "sizes": dict(found), **({"clean_model_sizes": dict(clean)} if clean is not None else {}),
            **({"filler_sizes": dict(filler)} if filler is not None else {})}


def dumps(found: Mapping[str, Any]) -> str:
    return json.dumps(found, indent=1) + "\n"
