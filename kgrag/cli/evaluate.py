"""``kgrag eval``: retrieval, answer and intent figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from kgrag.cli.common import App, JsonOpt, emit, out, progress_bars, state
from kgrag.config import Settings

eval_app = App(no_args_is_help=True, help="Evaluate retrieval quality.")


EvalQuestionsOpt = Annotated[
    Path, typer.Option("--questions", help="HippoRAG-format questions (MuSiQue or HotpotQA)")
]
EvalCorpusOpt = Annotated[Path, typer.Option("--corpus", help="the passages to retrieve from")]
EvalStoreOpt = Annotated[
    str | None,
    typer.Option("--store", help="store URI (default: one per corpus in ./kgrag-data/eval)"),
]
EvalLimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="first N questions")]


@eval_app.command("retrieval")
def eval_retrieval(
    questions: EvalQuestionsOpt,
    corpus: EvalCorpusOpt,
    store: EvalStoreOpt = None,
    limit: EvalLimitOpt = None,
    per_question: Annotated[
        Path | None,
        typer.Option("--per-question", help="write each question's titles and recall (JSON)"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Passage recall@2/@5 of kgrag and of dense-only retrieval, and per-question latency."""
    from kgrag.eval.retrieval import run_retrieval_eval

    show = not (as_json or state["quiet"])
    with progress_bars(show, label_width=9) as bars:
        tasks: dict[str, Any] = {}

        def on_progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bars.add_task(stage, total=total)
            bars.update(tasks[stage], completed=done, total=total)

        report = run_retrieval_eval(
            questions,
            corpus,
            Settings(),
            store=store,
            limit=limit,
            progress=lambda e: on_progress(e.stage, e.done, e.total),
            on_question=lambda n, total: on_progress("questions", n, total),
        )
    if per_question is not None:
        rows = [r.row() for r in report.per_question]
        per_question.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    if as_json:
        emit(report.summary())
        return
    out.print(
        f"{report.questions} questions, {report.passages} passages ({report.format})", markup=False
    )
    for name, r in (("kgrag", report.kgrag), ("dense", report.dense)):
        out.print(f"{name:>6}: recall@2 {r.at_2 * 100:.1f}  recall@5 {r.at_5 * 100:.1f}")
    lat = report.latency_ms
    out.print(f"latency per question: p50 {lat.p50:.0f} ms, p95 {lat.p95:.0f} ms")
    ing = report.ingest
    out.print(
        f"ingestion: {ing.ingested} new passages, {ing.skipped} already stored, "
        f"{ing.seconds:.1f} s (ingestion fingerprint {report.ingestion_fingerprint})",
        markup=False,
    )


@eval_app.command("answers")
def eval_answers(
    questions: EvalQuestionsOpt,
    corpus: EvalCorpusOpt,
    store: EvalStoreOpt = None,
    limit: EvalLimitOpt = None,
    unanswerable: Annotated[
        bool,
        typer.Option(
            "--unanswerable/--no-unanswerable",
            help="also ask each question with its supporting passages hidden, and out-of-domain "
            "questions (abstention figures)",
        ),
    ] = True,
    as_json: JsonOpt = False,
) -> None:
    """Is the gold answer (or an alias) in the agent's answer? With recall@k and abstention."""
    from kgrag.eval.answers import run_answers_eval

    show = not (as_json or state["quiet"])
    with progress_bars(show, label_width=9) as bars:
        task = bars.add_task("questions", total=None)
        report = run_answers_eval(
            questions,
            corpus,
            Settings(),
            store=store,
            limit=limit,
            unanswerable=unanswerable,
            out_of_domain=unanswerable,
            on_question=lambda n, total: bars.update(task, completed=n, total=total),
        )
    if as_json:
        emit(report.model_dump(mode="json", by_alias=True))
        return
    a = report.answerable
    out.print(
        f"answerable: {a.correct}/{a.questions} answers contain the gold answer "
        f"({(a.answer_accuracy or 0) * 100:.1f}%), false abstention {a.abstention_rate * 100:.1f}%",
        markup=False,
    )
    if a.recall is not None:
        out.print(
            f"retrieval: recall@2 {a.recall.at_2 * 100:.1f}  recall@5 {a.recall.at_5 * 100:.1f}"
        )
    for name, summary in (
        ("unanswerable", report.unanswerable),
        ("out of domain", report.out_of_domain),
    ):
        if summary is not None:
            out.print(
                f"{name}: abstained on {summary.abstained}/{summary.questions} "
                f"({summary.abstention_rate * 100:.1f}%)",
                markup=False,
            )


@eval_app.command("intents")
def eval_intents(as_json: JsonOpt = False) -> None:
    """Accuracy of the intent classifier on the held-out phrasings and on issue 15's phrasings
    (neither trained nor tuned on)."""
    from kgrag.eval.intents import run_intent_eval

    report = run_intent_eval()
    if as_json:
        emit(report.model_dump(mode="json"))
        return
    out.print(
        f"{report.training_phrasings} training phrasings, accuracy on the training folds "
        f"{report.cv_accuracy * 100:.1f}%, fallback margin {report.threshold} (chosen on them)",
        markup=False,
    )
    for r in report.sets:
        out.print(
            f"{r.name}: {r.size} phrasings, class accuracy {r.accuracy * 100:.1f}%, "
            f"right plan {r.plan_accuracy * 100:.1f}% ({r.fallbacks} unsure -> content plan), "
            f"right first step {r.tool_accuracy * 100:.1f}%",
            markup=False,
        )
        for m in r.misses:
            out.print(
                f"  miss: {m.text!r} is {m.label}, classified {m.predicted} "
                f"(margin {m.margin:.2f}), acted on as {m.acted_on}, first step {m.tool}",
                markup=False,
            )
