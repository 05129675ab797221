"""answer() for HybridQA: every passage read is reported, and improvement 1 of §6.2.

The parser often cannot tell which ``_Info`` column holds a fact (a table has several).
Improvement 1 lives in the executor, so the parser never knows: when ``answer(column, q)``
finds nothing in a row's passage (Unknown), the same question is put to the row's other
passage columns, in table order, until one says something.  The paper rewrites
``answer(col, q)`` into ``answer_any(col, others, q)``; here the LLM that the SUQL compiler
calls is wrapped, which is the same thing seen from the compiler: it asks one question of one
row and receives one value.

The compiler names the row it asks about by its label (``#<rowid> <name>``); the reader keeps
every row's passages by rowid (read once from the sandbox), so it knows which column a text
came from and what the row's other passages are.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engines.events import Emit
from engines.hybridqa.events import FallbackTried, PassageRead
from engines.llm.client import LLM
from engines.llm.protocol import Answer
from engines.llm.task import Task
from engines.sql.sandbox import Sandbox
from engines.suql.tasks import ANSWER, AnswerInput
from worlds.hybridqa import INFO_SUFFIX, quote_ident

_ROW_LABEL = re.compile(r"^#(\d+)\b")
_FALLBACK_LOCK = threading.Lock()


@dataclass(frozen=True)
class RowPassages:
    rowid: int
    passages: dict[str, str | None]  # _Info column -> text


class PassageDirectory:
    """The passages of every row of one table, by rowid, in column order."""

    def __init__(self, table: str, columns: Sequence[str], rows: dict[int, RowPassages]) -> None:
        self.table = table
        self.columns = tuple(columns)
        self.rows = rows
        self._by_text: dict[str, list[tuple[int, str]]] = {}
        for r in rows.values():
            for c, text in r.passages.items():
                if text:
                    self._by_text.setdefault(text, []).append((r.rowid, c))

    @classmethod
    def read(cls, sandbox: Sandbox, table: str) -> PassageDirectory:
        cols = [c for c, _ in sandbox.columns_of(sandbox.check(f"SELECT * FROM {quote_ident(table)}"))]
        info = [c for c in cols if c.endswith(INFO_SUFFIX)]
        if not info:
            return cls(table, (), {})
        listed = ", ".join(quote_ident(c) for c in info)
        result = sandbox.run(f"SELECT rowid AS _rowid, {listed} FROM {quote_ident(table)}")
        rows = {
            int(r[0]): RowPassages(int(r[0]), dict(zip(info, (None if v is None else str(v) for v in r[1:]))))
            for r in result.rows
        }
        return cls(table, info, rows)

    def locate(self, row_key: str | None, text: str) -> tuple[RowPassages | None, str | None]:
        """The row a call is about and the column its text came from (either may be unknown)."""
        row = None
        if row_key:
            m = _ROW_LABEL.match(row_key)
            if m:
                row = self.rows.get(int(m.group(1)))
        if row is not None:
            column = next((c for c, t in row.passages.items() if t is not None and t == text), None)
            return row, column
        found = self._by_text.get(text)
        if found:
            rowid, column = found[0]
            return self.rows[rowid], column
        return None, None

    def others(self, row: RowPassages, column: str | None, text: str) -> list[tuple[str, str]]:
        """The row's other passages, in column order: (column, text)."""
        return [(c, t) for c, t in row.passages.items() if c != column and t and t != text]


class PassageReader(LLM):
    """The LLM the SUQL compiler calls, with answer() reporting each read and falling back."""

    def __init__(
        self,
        base: LLM,
        directory: PassageDirectory,
        *,
        fallback: bool = True,
        emit: Emit | None = None,
        cancel: threading.Event | None = None,
        _fallbacks: list[int] | None = None,
    ) -> None:
        super().__init__(
            base.backend,
            cache=base.cache,
            emit=emit or base.emit,
            cancel=cancel if cancel is not None else base.cancel,
            clock=base.clock,
            counter=base.counter,
            prices=base.prices,  # its calls are priced as the base LLM's are
        )
        self.base = base
        self.directory = directory
        self.fallback = fallback
        self._fallbacks = _fallbacks if _fallbacks is not None else [0]  # shared by every binding
        self._lock = _FALLBACK_LOCK

    @property
    def fallback_calls(self) -> int:
        """answer() calls made by the fallback, over every binding of this reader."""
        return self._fallbacks[0]

    def bind(self, emit: Emit | None = None, cancel: threading.Event | None = None) -> PassageReader:
        return PassageReader(
            self.base,
            self.directory,
            fallback=self.fallback,
            emit=emit or self.emit,
            cancel=cancel if cancel is not None else self.cancel,
            _fallbacks=self._fallbacks,
        )

    def run(self, task: Task[Any, Any], input: Any, *, row_key: str | None = None) -> Any:
        """Every task as the base LLM runs it, but ``answer`` reads with the fallback (below)."""
        if task is not ANSWER:
            return super().run(task, input, row_key=row_key)
        return self._read(input.text, input.question, row_key)

    def _read(self, text: str, question: str, row_key: str | None) -> Answer:
        first: Answer = super().run(ANSWER, AnswerInput(text, question), row_key=row_key)
        row, column = self.directory.locate(row_key, text)
        self.emit(PassageRead(row_key, column, question, first.value, "the query's answer()"))
        if first.value is not None or not self.fallback or row is None:
            return first
        said = column or "the column the query named"
        for other, other_text in self.directory.others(row, column, text):
            self.emit(FallbackTried(row_key, question, column, other))
            with self._lock:  # the compiler may read rows on a pool of threads
                self._fallbacks[0] += 1
            got: Answer = super().run(ANSWER, AnswerInput(other_text, question), row_key=row_key)
            self.emit(PassageRead(row_key, other, question, got.value, f"fallback: {said} did not say"))
            if got.value is not None:
                return got
        return first
