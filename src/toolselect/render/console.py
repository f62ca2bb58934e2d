"""The console view: a progress bar while samples run, then the case table, the confusion matrix,
the metrics and the gate line (rich)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from ..gate import critical_samples
from ..report.reading import right_cell
from ..report.schema import FindingOut, Report, shown_metric
from .clients import client_lines
from .common import (
    CLUSTER_NOTE,
    METRIC_LABELS,
    accuracy_line,
    bill,
    case_row,
    codes_text,
    column_word,
    delta_text,
    dimension_rows,
    frac,
    hot_cells,
    interval,
    labels,
    lint_summary,
    metric_text,
    pct,
    replies_line,
    states_text,
    tools_count,
)
from .findings import finding_groups, more_text, tally
from .headline import MAX_CRITICAL, WARN_NOTE
from .search import search_changes, search_lines
from .terminal import bar_of, make_console, table_of
from .ticker import Ticker

if TYPE_CHECKING:  # the bars and tables only when drawn (a quiet run draws none)
    from rich.progress import Progress, TaskID

    from ..diff import Diff
    from ..gate import BaseFailure
    from ..golden import Case
    from ..lint.finding import Finding
    from ..outcome import Outcome
    from ..pipeline.prepare import Hooks
    from ..settings import Settings
    from ..stress import StressReport
    from ..surface import Surface

STYLE = {
    "PASS": "green",
    "ERROR": "bold magenta",
    "NOT-EVALUATED": "dim",
}
EVERY_FINDING = "every finding: toolselect lint --all (or --json FILE)"
MAX_ROWS_ALL = 40  # beyond this many cases, list only the ones that need attention
MAX_CONFUSIONS = 10  # the confusions listed, biggest first
MAX_MATRIX = 14  # beyond this many labels, show the hot cells only


class ConsoleView:
    def __init__(self, quiet: bool = False, console: Console | None = None) -> None:
        self.quiet = quiet
        self.console = console or make_console()
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self.started = False
        self.batches: Progress | None = None  # --batch: a bar per model while its batches run
        self.batch_tasks: dict[str, TaskID] = {}
        self.ticker: Ticker | None = None  # no terminal (a CI log): plain progress lines instead of a bar

    def hooks(self) -> Hooks:
        from ..pipeline.prepare import Hooks

        return Hooks(on_start=self.start, on_sample=self.advance, on_note=self.note, on_batch=self.batch)

    def batch(self, label: str, done: int, total: int, over: bool) -> None:
        """A model's batches: how many of their requests are done; `over`, the bar goes."""
        if over:
            task = self.batch_tasks.pop(label, None)
            if self.batches is not None and task is not None:
                self.batches.remove_task(task)
            if self.batches is not None and not self.batch_tasks:
                self.batches.stop()
                self.batches = None
            return
        if self.quiet:
            return
        if self.batches is None:
            self.batches = bar_of("batch {task.description}", self.console)
            self.batches.start()
        if label not in self.batch_tasks:
            self.batch_tasks[label] = self.batches.add_task(escape(label), total=total or None)
        self.batches.update(self.batch_tasks[label], completed=done, total=total or None)

    def stop(self) -> None:
        """Take the progress bar away (the run ended, or was interrupted)."""
        self.started = False
        if self.batches is not None:
            self.batches.stop()
            self.batches, self.batch_tasks = None, {}
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
        if self.ticker is not None:
            self.ticker.stop()
            self.ticker = None

    def start(self, settings: Settings, surface: Surface, cases: list[Case], samples: int) -> None:
        call = settings.call
        model = f" {call.model}" if call.model else ""
        if self.ticker is not None:  # another model of the run, in a log: one count for all
            self.ticker.grow(samples)
            self.console.print(
                f"and {'client' if settings.client is not None else 'model'} [bold]{escape(settings.labels[0])}[/] · "
                f"provider [cyan]{escape(call.provider)}"
                f"{escape(model)}[/]"
            )
            return
        if self.progress is not None and self.task is not None:  # another model of the run: one bar for all
            self.progress.update(self.task, total=(self.progress.tasks[0].total or 0) + samples)
            self.progress.console.print(
                f"and {'client' if settings.client is not None else 'model'} [bold]{escape(settings.labels[0])}[/] · "
                f"provider [cyan]{escape(call.provider)}"
                f"{escape(model)}[/]"
            )
            return
        if self.started:  # another model of a quiet run: its notes were said
            return
        self.started = True
        for note in settings.notes:
            self.console.print(f"[dim]info: {escape(note)}[/]")
        if self.quiet:
            return
        from .. import __version__

        repeat = f" × {settings.repeat} samples" if settings.repeat > 1 else ""
        word = "client" if settings.client is not None else "model"
        label = f"{word} [bold]{escape(settings.labels[0])}[/] · " if settings.several else ""
        self.console.print(
            f"[bold]toolselect {__version__}[/] · {label}provider [cyan]{escape(call.provider)}{escape(model)}[/]"
            f" · {len(cases)} cases{repeat} · concurrency {settings.concurrency}"
        )
        self.console.print(
            f"tool surface: {tools_count(len(surface.tools))} from {escape(surface.origin)} "
            f"[dim](hash {surface.hash[:12]})[/]"
        )
        for lo in surface.left_out:
            self.console.print(f"  [yellow]left out[/] {escape(lo.name)}: {escape(lo.reason)}")
        if not self.console.is_terminal:
            self.ticker = Ticker(lambda line: self.console.print(escape(line)), samples)
            return
        self.progress = bar_of("asking", self.console)
        self.progress.start()
        self.task = self.progress.add_task("samples", total=samples)

    def advance(self, job: Any, pick: Any) -> None:
        if self.ticker is not None:
            self.ticker.advance(error=getattr(pick, "error", None) is not None)
        if self.progress is not None and self.task is not None:
            self.progress.advance(self.task)

    def note(self, text: str) -> None:
        if not self.quiet:
            self.console.print(escape(text))

    def finish_outcome(self, outcome: Outcome) -> None:
        """After a run: the report (one model), or each model's matrix and metrics, the model × metric
        table and each model's own line; the comparison when one was asked for; then the verdict, once."""
        if not outcome.several:
            self.finish(outcome.head)
        else:
            self.finish_models(outcome)
        if outcome.compared:
            self.print_comparison(outcome)
        self.print_verdict(outcome)

    def finish_models(self, outcome: Outcome) -> None:
        self.stop()
        for m in outcome.models:
            report = m.head
            if not self.quiet:
                self.console.rule(
                    f"[bold]{escape(m.label)}[/] · {escape(report.run.provider)} {escape(report.run.model)}"
                )
                self.print_critical(report)
                self.print_confusion(report)
                self.print_metrics(report)
                self.print_dimensions(report)
                self.print_notes(report, m.diff)
        if not self.quiet:
            self.print_lint(outcome.head.lint, per_code=1, every=EVERY_FINDING)
            self.print_models(outcome)
        for m in outcome.models:
            mark = "[green]✓[/]" if m.verdict.passed else "[red]✗[/]"
            self.console.print(f"{mark} [bold]{escape(m.label)}[/]: {escape(accuracy_line(m.head))}")

    def print_models(self, outcome: Outcome) -> None:
        """One row per model: accuracy (base → head and Δ when compared), the other headline metrics."""
        table = table_of("Models")
        compared = any(m.diff is not None for m in outcome.models)
        first = column_word(outcome.models)
        for col in (first, "accuracy", *(("base", "Δ", "p") if compared else ()), "tool acc.", "restraint",
                    "over-trigger", "errors", "gate"):  # fmt: skip
            table.add_column(col, justify="left" if col in (first, "gate") else "right")

        for m in outcome.models:
            r = m.head.metrics
            cells = [escape(m.label), pct(r["accuracy"])]
            if compared:
                if m.diff is not None:
                    d = m.diff.metrics["accuracy"]
                    cells += [pct(d.base), delta_text(d.delta_pt), f"{m.diff.paired.p_value:.2g}"]
                else:
                    cells += ["n/a", "", ""]
            gate = "[green]pass[/]" if m.verdict.passed else "[red]FAIL[/]"
            cells += [pct(r["tool_accuracy"]), pct(r["no_call_recall"]), pct(r["over_trigger_rate"]),
                      pct(r["error_rate"]), gate]  # fmt: skip
            table.add_row(*cells)
        self.console.print(table)

    def finish(self, report: Report) -> None:
        self.stop()
        answered = report.run.cache_mode == "off" or report.run.api_calls + report.run.cache_hits > 0
        if not self.quiet and (answered or not report.gate.stopped):  # a run that stopped before any answer: no table
            self.print_critical(report)
            self.print_cases(report)
            self.print_confusion(report)
            self.print_metrics(report)
            self.print_dimensions(report)
            self.print_notes(report)
            self.print_lint(report.lint, per_code=1, every=EVERY_FINDING)

    def print_notes(self, report: Report, diff: Diff | None = None) -> None:
        """What the client did to the surface (evals.clients), then the report's warnings."""
        for line in client_lines(report, diff):
            self.console.print(f"[bold]client[/] {escape(line)}")
        for line in search_lines(report, diff):
            self.console.print(f"[bold]search[/] {escape(line)}")
        for warning in report.warnings:
            self.console.print(f"[yellow]warning:[/] {escape(warning)}")

    def print_critical(self, report: Report) -> None:
        """The critical misroutes first, apart (severity.py): a destructive or writing call nobody asked
        for, or a call the case must not make."""
        count, found = critical_samples(report)
        if found:
            most = report.gate.max_critical
            said = f"over max_critical {most}: the gate fails" if count > most else f"within max_critical {most}"
            self.console.print(f"[bold red]Critical misroutes ({count} sample{'s' * (count != 1)})[/]: {said}")
            for line in found[:MAX_CRITICAL]:
                self.console.print(f"  [red]⛔[/] {escape(line)}")
            if len(found) > MAX_CRITICAL:
                self.console.print(f"  [dim]and {len(found) - MAX_CRITICAL} more (see --json or --markdown)[/]")

    def print_cases(self, report: Report) -> None:
        rows = [case_row(c) for c in report.cases]
        shown = rows if len(rows) <= MAX_ROWS_ALL else [r for r in rows if r.failing or r.case.status != "reviewed"]
        table = table_of("Cases", expand=False)
        table.add_column("outcome", no_wrap=True)
        table.add_column("case", overflow="fold", max_width=40)
        table.add_column("expected", overflow="fold")
        table.add_column("picked", overflow="fold", max_width=44)
        table.add_column("why", overflow="fold", max_width=60)
        for row in shown:
            style = STYLE.get(row.outcome, "red")
            outcome = f"[{style}]{row.outcome}[/]" + (f" {row.rate}" if row.rate else "")
            name = escape(row.case.name) + (" [dim](needs review)[/]" if row.case.status == "needs_review" else "")
            table.add_row(outcome, name, escape(row.expected), escape(row.picked), escape(row.why))
        self.console.print(table)
        if len(shown) < len(rows):
            self.console.print(f"[dim]{len(rows) - len(shown)} passing cases not shown (see --json or --markdown)[/]")

    def print_confusion(self, report: Report) -> None:
        rows, cols = labels(report)
        if not rows:
            return
        if len(cols) <= MAX_MATRIX:
            # Numbered columns when the tool names don't fit side by side.
            wide = max(len(r) for r in rows) + sum(len(c) + 3 for c in cols) + 4 > self.console.width
            numbers = {label: str(i) for i, label in enumerate(cols, 1)}
            table = table_of("Confusion matrix (rows: expected, columns: picked)")
            table.add_column("expected \\ picked", style="bold")
            for col in cols:
                table.add_column(numbers[col] if wide else escape(col), justify="right")
            for row in rows:
                cells = []
                for col in cols:
                    n = report.confusion.get(row, {}).get(col, 0)
                    if not n:
                        cells.append("[dim]·[/]")
                    elif right_cell(row, col):
                        cells.append(f"[green]{n}[/]")
                    else:
                        cells.append(f"[bold red]{n}[/]")
                label = f"{numbers[row]} {row}" if wide and row in numbers else row
                table.add_row(escape(label), *cells)
            self.console.print(table)
            if wide:
                legend = ", ".join(f"{numbers[c]} {c}" for c in cols if c not in rows)
                if legend:
                    self.console.print(f"[dim]columns: {escape(legend)}[/]")
        hot = hot_cells(report.confusion)
        if hot:
            self.console.print("[bold]Confusions[/] (wanted → got):")
            for expected, picked, n in hot[:MAX_CONFUSIONS]:
                self.console.print(f"  [red]{n:>3}[/]  wanted {escape(expected)}, got {escape(picked)}")
            if len(hot) > MAX_CONFUSIONS:
                rest = sum(n for _, _, n in hot[MAX_CONFUSIONS:])
                more = len(hot) - MAX_CONFUSIONS
                self.console.print(
                    f"  [dim]… {more} more ({rest} samples): the HTML report and --json hold them all[/]"
                )

    def print_metrics(self, report: Report) -> None:
        table = table_of("Metrics")
        table.add_column("metric")
        table.add_column("value", justify="right")
        table.add_column("n/d", justify="right", style="dim")
        table.add_column("95% CI", justify="right", style="dim")
        for key, label in METRIC_LABELS.items():
            if (m := shown_metric(report, key)) is None:
                continue
            table.add_row(label, metric_text(m, report, key), frac(m), interval(m))
        self.console.print(table)
        if (said := replies_line(report)) is not None:
            self.console.print(escape(said))
        if any(interval(m).endswith("†") for m in report.metrics.values()):
            self.console.print(f"[dim]{CLUSTER_NOTE}[/]")
        if report.position:
            pos = table_of("Accuracy by the expected tool's position (shuffled tool order)")
            for col in ("position", "accuracy", "n/d", "95% CI"):
                pos.add_column(col, justify="left" if col == "position" else "right")
            for third, m in report.position.items():
                pos.add_row(f"{third} third", pct(m), frac(m), interval(m))
            self.console.print(pos)
        if report.flaky:
            rates = {c.name: f"{c.passed}/{c.evaluated}" for c in report.cases}
            shown = ", ".join(f"{escape(n)} {rates[n]}" for n in report.flaky[:15])
            more = f" and {len(report.flaky) - 15} more" if len(report.flaky) > 15 else ""
            self.console.print(
                f"[yellow]flaky[/] ({len(report.flaky)} cases pass some samples, not all): {shown}{more}"
            )
        if report.per_tool:
            tools = table_of("Per tool")
            for col in ("tool", "precision", "recall", "F1", "support"):
                tools.add_column(col, justify="left" if col == "tool" else "right")
            for name, s in report.per_tool.items():
                f1 = "n/a" if s.f1 is None else f"{s.f1:.2f}"
                tools.add_row(escape(name), pct(s.precision), pct(s.recall), f1, str(s.support))
            self.console.print(tools)
        c = report.counts
        extra = []
        if c.pending_cases:
            extra.append(f"{c.pending_cases} cases need review (scored, not counted)")
        if c.not_evaluated:
            extra.append(f"{c.not_evaluated} samples NOT-EVALUATED")
        if extra:
            self.console.print("[yellow]" + "; ".join(extra) + "[/]")

    def print_dimensions(self, report: Report) -> None:
        """Trajectory cases: seed 004's four dimensions and the failure codes."""
        if report.dimensions is None:
            return
        table = table_of("Trajectories: the tool-use dimensions (0–3)")
        for col in ("dimension", "mean", "95% CI", "scores 0:1:2:3", "n"):
            table.add_column(col, justify="left" if col == "dimension" else "right")
        for row in dimension_rows(report.dimensions):
            table.add_row(row.label, row.mean, row.ci, row.distribution, str(row.n))
        self.console.print(table)
        self.console.print(f"failure codes: {escape(codes_text(report.failure_codes or {}))}")

    def print_stress(self, report: StressReport) -> None:
        from .console_stress import print_stress

        print_stress(self.console, report)

    def print_outcome(self, outcome: Outcome) -> None:
        """The comparison, then the verdict (`toolselect diff`)."""
        self.print_comparison(outcome)
        self.print_verdict(outcome)

    def print_comparison(self, outcome: Outcome) -> None:
        """The base-vs-head part: metric deltas, changed cells, flipped cases (per model, and what
        moved in opposite directions for two models) — or why no comparison ran."""
        for m in outcome.models:
            if outcome.several:
                self.console.print(f"[bold]{escape(m.label)}[/]")
            if m.base_failure is not None:
                self.print_base_failure(m.base_failure)
            else:
                self.print_diff(m.diff, m.base_note, str(outcome.base_label))
        moved = outcome.portability
        if moved:
            self.console.print("[bold]Portability[/]: moved in opposite directions for two models")
            for case in moved.cases:
                helped = ", ".join(f"{escape(label)} {rates}" for label, rates in case.helped)
                hurt = ", ".join(f"{escape(label)} {rates}" for label, rates in case.hurt)
                self.console.print(f"  case {escape(case.name)}: helped {helped}; hurt {hurt}")
            for cell in moved.cells:
                helped = ", ".join(f"{escape(label)} {d:+d}" for label, d in cell.helped)
                hurt = ", ".join(f"{escape(label)} {d:+d}" for label, d in cell.hurt)
                self.console.print(
                    f"  cell wanted {escape(cell.expected)}, got {escape(cell.picked)}: better for {helped}; "
                    f"worse for {hurt}"
                )

    def print_base_failure(self, failed: BaseFailure) -> None:
        self.console.print(f"[bold red]no comparison[/]: the base could not be evaluated: {escape(failed.reason)}")
        for line in failed.details.splitlines()[-20:]:
            self.console.print(f"  [dim]{escape(line)}[/]")
        if failed.hint:
            self.console.print(f"  hint: {escape(failed.hint)}")

    def print_diff(self, diff: Diff | None, base_note: str | None, base_label: str) -> None:
        from .common import cell_line

        if diff is None:
            self.console.print(f"[yellow]{escape(base_note or 'no baseline')}[/]")
        else:
            m = diff.metrics["accuracy"]
            self.console.print(
                f"[bold]vs base {escape(base_label)}[/]: accuracy {pct(m.base)} → {pct(m.head)} "
                f"({delta_text(m.delta_pt)})"
            )
            for cell in [c for c in diff.cells if not c.diagonal][:10]:
                self.console.print("  " + escape(cell_line(cell).removeprefix("- ").replace("`", "")))
            p = diff.paired
            if p.ci_pt is not None:
                from ..gate import significance_text

                self.console.print(
                    f"  paired over {p.cases} cases: {delta_text(p.delta_pt)}, "
                    f"95% CI {p.ci_pt[0]:+.1f}…{p.ci_pt[1]:+.1f} pt, "
                    f"{significance_text(diff)} by {p.test} ({p.improved} better, {p.worsened} worse)"
                )
            if diff.states:
                self.console.print(f"  {escape(states_text(diff.states))}")
            flipped = (("flipped to failing", diff.to_failing), ("flipped to passing", diff.to_passing))
            for title, cases in (*flipped, ("inconclusive", diff.inconclusive_cases)):
                for case in cases[:20]:
                    certain = " [bold](certain)[/]" if case.certain else ""
                    state = f" ({case.state})" if case.state and case.state != title else ""
                    self.console.print(
                        f"  {title}{certain}: {escape(case.name)} — base {escape(case.base.pick)}, "
                        f"head {escape(case.head.pick)}{state}"
                    )
            for change in diff.tools:
                self.console.print(f"  tool {escape(change.name)}: {change.kind}")
            for line in search_changes(diff):
                self.console.print(f"  {escape(line)}")

    def print_verdict(self, outcome: Outcome) -> None:
        """The verdict, said once: PASSED or FAILED, what it judged, the reasons and notes."""
        judged = accuracy_line(outcome.head) if not outcome.several else f"{len(outcome.models)} models"
        if outcome.compared and all(m.diff is not None for m in outcome.models):
            judged += f" · and the comparison with {outcome.base_label}"
            states = outcome.diff.states if outcome.diff is not None and not outcome.several else {}
            judged += f" ({states_text(states, ', ')})" if states else ""
        elif outcome.compared:
            judged += " · no comparison ran"
        for m in outcome.models:
            if m.head.gate.stopped:
                of = f"{m.label}: " if outcome.several else ""
                self.console.print(f"[bold red]STOPPED[/]  {escape(of + m.head.gate.stopped)}")
        for note in (*outcome.notes, *outcome.verdict.notes):
            self.console.print(f"  [dim]{escape(note)}[/]")
        heads, bases = [m.head.run for m in outcome.models], [m.base.run for m in outcome.models if m.base]
        if not self.quiet and (cost := bill(heads, bases)):
            priced = next((r.priced_by for r in heads if r.priced_by and r.api_calls), None)
            self.console.print(f"  [dim]{escape(cost)}{escape(f' — {priced}') if priced else ''}[/]")
        style = {"passed": "bold green", "failed": "bold red"}.get(outcome.word, "bold yellow")
        self.console.print(f"[{style}]{outcome.word.upper()}[/]  {escape(judged)}")
        if outcome.warned:
            self.console.print(f"  [yellow]{escape(WARN_NOTE)}[/]")
        for reason in outcome.verdict.reasons:
            self.console.print(f"  - {escape(reason)}")

    def print_lint(
        self, findings: Sequence[Finding | FindingOut], per_code: int | None = 3, title: str = "Lint", every: str = ""
    ) -> None:
        """The golden set's findings, then the surface's: `per_code` of each code in full (None: all), the
        rest counted; then one line that tallies every code, and `every`: where the whole list is."""
        if not findings:
            return
        self.console.print(f"[bold]{title}[/]: {lint_summary(findings)}")
        colour = {"error": "red", "warning": "yellow", "info": "cyan"}
        groups = finding_groups(findings, per_code)
        for group in groups:
            self.console.print(f"[bold]{group.title}[/] ({group.total})")
            for f in group.shown:
                place = f"{f.file}:{f.line} " if f.file and f.line else (f"{f.file} " if f.file else "")
                self.console.print(
                    f"  [{colour[f.severity]}]{f.severity:<7}[/] [dim]{escape(f.code)}[/] "
                    f"{escape(place)}{escape(f.message)}"
                )
                if f.fix:
                    self.console.print(f"           [dim]fix: {escape(f.fix)}[/]")
            if group.more:
                self.console.print(f"  [dim]{escape(more_text(group.more))}[/]")
        if any(g.more for g in groups) or len({f.code for f in findings}) > 1:
            self.console.print(f"[bold]By code[/]: {escape(tally(findings))}")
        if every and any(g.more for g in groups):
            self.console.print(f"[dim]{escape(every)}[/]")
