"""HybridQA (lecture 7 §6): questions over tables whose cells link to passages.

parse (zero-shot SUQL from the table's schema) → execute (the SUQL compiler) → retry when nothing
comes back → short answer; scored with SQuAD EM/F1, a judge that reads hidden truth, and the
error analysis of §6.4–§6.5.  Modules: ``events`` (what the pipeline reports), ``reader`` (answer()
with improvement 1, the fallback to other passage columns), ``pipeline`` (one question),
``scoring`` (EM, F1, the judge, error classes), ``evaluate`` (a question set and the ablation),
``session`` (world + sandbox + LLM + pipeline).
"""
