"""``egorec console``: the operator's web page, a client of the recorder's interfaces only."""
