"""`egorec inspect` without --json: the drops of an episode read as counts, not as dict reprs."""
from egorec_ros.cli.inspect_cmd import drops_text


def test_drops_read_as_counts_per_stream() -> None:
    text = drops_text({"cam0.rgb": {"repeated": 3, "late": 1}, "left_glove.pressure": {"invalid": 2}})
    assert text == "cam0.rgb: 3 repeated, 1 late; left_glove.pressure: 2 invalid"
    assert "{" not in text


def test_no_drops_says_so() -> None:
    assert drops_text({}) == "no drops"
