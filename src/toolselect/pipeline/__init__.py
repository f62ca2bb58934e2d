"""A run, stage by stage: prepare (cases, surface, checks, plan) → execute (ask, score, report) for
each side (sides: the head and the base commit) → the comparison (eval: the spine). stress and merge
are the two other runs: distractors added, and shards put back together."""
