"""Pure statistics and judgement over the ledger's records: per-run summaries, comparisons
and verdicts, claim evaluation, receipt states, and the audit that `check` runs."""
