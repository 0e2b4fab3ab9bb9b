"""How a study's stop is reported: the rule it ran under, and when and why it stopped (the
report's methods and outcome), from its watch (app/agreement/monitoring.py)."""

from datetime import datetime

from app.agreement.monitoring import EndpointWatch, Watch


def stopping_rule(w: Watch) -> str:
    """The rule the study was run under, in one sentence for the report's methods."""
    targets = [f"{e.label} ± {e.target:g}" for e in w.endpoints if e.target is not None]
    if not targets:
        return ("No stopping rule was set: the study was planned to run to its planned reads; "
                "the anytime-valid intervals are reported beside the fixed-sample ones.")
    return ("The study could stop as soon as the anytime-valid interval of every target was at "
            f"most as wide as its target ({'; '.join(targets)}; {w.question}), however often "
            "it had been looked at; otherwise it ran to its planned reads.")


def stopping_outcome(w: Watch, *, locked: bool, locked_at: datetime | None) -> str:
    """When and why the study stopped, or that it is still running (interim): the reason is
    the real one (a study that ran to its planned reads stopped for that, whenever its
    targets were met), and each target met says when."""
    progress = (f"{w.reads_done} of {w.reads_planned} planned reads" if w.budget is None else
                f"{w.reads_done} reads and {w.draws_made} of at most {w.budget} draws")
    met = [e for e in w.endpoints if e.target is not None and e.met]
    missed = [e.label for e in w.endpoints if e.target is not None and not e.met]
    when_met = "; ".join(_when_met(e, w.unit) for e in met)
    if not locked:
        if w.all_read:
            return (f"Every planned read is in ({progress}); the study is still open: lock it "
                    "to fix its figures.")
        return f"Interim: {progress}; the study is still open."
    when = f" on {locked_at:%Y-%m-%d}" if locked_at else ""
    if w.all_read:
        found = f"Stopped{when} when every planned read was done ({progress})"
        if met:
            found += f"; {'every target' if w.precise_enough else 'a target'} had been met " \
                     f"before: {when_met}"
        return found + (f"; not met: {', '.join(missed)}." if missed else ".")
    if w.precise_enough:
        return f"Stopped{when} after {progress} because every target was met: {when_met}."
    return (f"Locked{when} by the study's administrator after {progress}, before "
            + ("every target was met." if w.targets_set else "every planned read was done."))


def _when_met(e: EndpointWatch, unit: str) -> str:
    reads = "" if e.met_after_reads is None else f", {e.met_after_reads} reads in"
    return f"{e.label} after {e.met_after_images} fully read {unit}s{reads}"
