"""Files a person asks benchledger to create and then commits: a new publication
(`init`) and receipts (`verify`)."""
