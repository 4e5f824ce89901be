"""Pure statistics and judgement over the ledger's records: per-run summaries, comparisons
and verdicts, attribution grids, claim evaluation, receipt states and signatures, reruns'
reproduction, the trials that would settle a verdict, reviews of a change, and the audit that
`check` runs."""
