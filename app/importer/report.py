"""What an import did, for the CLI summary and for tests."""

from collections import Counter
from dataclasses import dataclass, field

# Problems beyond this many are counted and stored in the database, not kept in memory.
MAX_PROBLEMS_IN_MEMORY = 1000


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    task_key: str
    kind: str
    detail: str


@dataclass
class ImportReport:
    files_imported: int = 0
    files_unchanged: int = 0
    files_ignored: list[str] = field(default_factory=list)
    tasks_added: int = 0
    runs_added: Counter[str] = field(default_factory=Counter)
    runs_unchanged: int = 0
    attempts_added: int = 0
    verdicts_added: int = 0
    problem_counts: Counter[str] = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)

    def add_problem(self, problem: Problem) -> None:
        self.problem_counts[problem.kind] += 1
        if len(self.problems) < MAX_PROBLEMS_IN_MEMORY:
            self.problems.append(problem)

    @property
    def problem_total(self) -> int:
        return sum(self.problem_counts.values())
