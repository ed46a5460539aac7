"""pooled_episodes_v1 -> EgoSmith WebDataset shards (what the EgoSteer trainer reads).

``run.export`` writes the shards, ``rules.check_shards`` applies the trainer's drop rules
to shards, ``cli`` is ``egorec export egosmith``."""
