"""The Lab: every demo and exercise of lectures 6-8 as a named experiment that runs the engines.

    from engines import lab
    for e in lab.experiments(lecture=6): print(e.name, e.title)
    table = lab.get("l6-classify").run(size="small", progress=print, cancel=threading.Event())
    table.columns, table.rows, table.notes, table.chart

See :mod:`engines.lab.core` for :class:`Experiment`, :class:`Table`, :class:`Chart`.
"""

from engines.lab.core import Chart, Experiment, Progress, RunContext, Series, Table
from engines.lab.registry import experiments, get, lectures

__all__ = ["Chart", "Experiment", "Progress", "RunContext", "Series", "Table", "experiments", "get", "lectures"]
