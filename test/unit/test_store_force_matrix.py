"""Force matrix column codec (§4.6, DESIGN "Force matrix"): quantisation (int16 truncates,
int16xN rounds), clipping at +-32767, int16 wrap-around of the row differences, the
(250, 250, 3) -> (250, 750) row layout, batches, and the writer's Arrow column."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from egorec_ros.codecs import force_matrix as fm
from egorec_ros.schema import columns as col


def matrix_with_row0(values: list[float]) -> np.ndarray:
    m = np.zeros(fm.SHAPE, np.float32)
    m[0, :len(values), 0] = values
    return m


def quantised_row0(values: list[float], scale: int) -> list[int]:
    """Row 0 of the row difference is the quantised row itself."""
    flat = fm.encode_row_diff(matrix_with_row0(values), scale)[0]
    return flat[:3 * len(values):3].tolist()


def test_scale_1_truncates_towards_zero() -> None:
    assert quantised_row0([1.9, -1.9, 0.5, -0.5, 2.0, 123.99], 1) == [1, -1, 0, 0, 2, 123]


def test_scale_n_rounds_half_to_even() -> None:
    # 0.25 * 10 = 2.5 -> 2, 0.75 * 10 = 7.5 -> 8, 1.04 * 10 -> 10, 1.06 * 10 -> 11
    assert quantised_row0([0.25, 0.75, -0.25, -0.75, 1.04, 1.06], 10) == [2, 8, -2, -8, 10, 11]


def test_clip_at_plus_minus_32767_and_nan_is_zero() -> None:
    values = [5000.0, -5000.0, np.inf, -np.inf, np.nan, 3276.7]
    assert quantised_row0(values, 10) == [32767, -32767, 32767, -32767, 0, 32767]
    assert quantised_row0([40000.0, -40000.0, -32768.0], 1) == [32767, -32767, -32767]   # never -32768


def test_row_layout_is_250_by_750_and_rows_are_differenced() -> None:
    m = np.zeros(fm.SHAPE, np.float32)
    m[7, 11, 2] = 42.0
    flat = fm.encode_row_diff(m, 1)[0]
    at = 7 * fm.ROW_WIDTH + 11 * 3 + 2
    assert flat[at] == 42 and flat[at + fm.ROW_WIDTH] == -42   # the next row subtracts it again
    assert np.count_nonzero(flat) == 2


def test_large_steps_wrap_around_and_decode_exactly() -> None:
    m = np.zeros(fm.SHAPE, np.float32)
    m[0::2] = 3276.7       # rows alternate between the two clip limits at scale 10
    m[1::2] = -3276.7
    diff = fm.encode_row_diff(m, 10).reshape(fm.ROWS, fm.ROW_WIDTH)
    assert diff[0, 0] == 32767 and diff[1, 0] == 2 and diff[2, 0] == -2   # -65534 and 65534 wrapped in int16
    decoded = fm.decode_row_diff(diff.reshape(-1), 10)[0]
    np.testing.assert_allclose(decoded, m, atol=1e-3)

    rng = np.random.default_rng(5)   # every step size, as integers at scale 1: exact
    q = rng.integers(-32767, 32768, fm.SHAPE).astype(np.float32)
    np.testing.assert_array_equal(fm.decode_row_diff(fm.encode_row_diff(q, 1), 1)[0], q)


def test_batches_equal_one_at_a_time() -> None:
    rng = np.random.default_rng(1)
    batch = rng.normal(0.0, 800.0, (5, *fm.SHAPE)).astype(np.float32)
    encoded = fm.encode(batch, fm.ROW_DIFF_QUANTIZED, 10)
    assert encoded.shape == (5, fm.FLAT) and encoded.dtype == np.int16
    for i in range(5):
        np.testing.assert_array_equal(encoded[i], fm.encode(batch[i], fm.ROW_DIFF_QUANTIZED, 10)[0])
    decoded = fm.decode(encoded, fm.ROW_DIFF_QUANTIZED, 10)
    assert decoded.shape == (5, *fm.SHAPE) and decoded.dtype == np.float32
    expected = np.clip(np.rint(batch * 10), -32767, 32767) / 10
    np.testing.assert_allclose(decoded, expected, atol=1e-4)
    for i in range(5):
        np.testing.assert_array_equal(decoded[i], fm.decode(encoded[i], fm.ROW_DIFF_QUANTIZED, 10)[0])


def test_flat_raw_is_exact() -> None:
    rng = np.random.default_rng(2)
    batch = rng.normal(0.0, 800.0, (3, *fm.SHAPE)).astype(np.float32)
    encoded = fm.encode(batch, fm.ROW_FLAT_RAW, 1)
    assert encoded.dtype == np.float32 and encoded.shape == (3, fm.FLAT)
    np.testing.assert_array_equal(fm.decode(encoded, fm.ROW_FLAT_RAW, 1), batch)
    np.testing.assert_array_equal(fm.decode(encoded, fm.ROW_FLAT_RAW, 4), batch / 4)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown force matrix encoding"):
        fm.encode(np.zeros(fm.SHAPE), "row_diff_8bit", 1)
    with pytest.raises(ValueError, match="250, 250, 3"):
        fm.encode(np.zeros((250, 750)), fm.ROW_DIFF_QUANTIZED, 1)


@pytest.mark.parametrize("encoding", fm.ENCODINGS)
def test_writer_column_holds_the_encoding_and_empty_rows(encoding: str) -> None:
    spec = col.force_matrix("observation.gripper_left_force_matrix", encoding, 10)
    rng = np.random.default_rng(3)
    values = [rng.normal(0, 500, fm.SHAPE).astype(np.float32) if i % 3 else None for i in range(7)]
    array = spec.to_arrow(values)
    item = pa.int16() if encoding == fm.ROW_DIFF_QUANTIZED else pa.float32()
    assert array.type == pa.list_(item)
    assert array.value_lengths().to_pylist() == [0 if v is None else fm.FLAT for v in values]
    present = np.stack([v for v in values if v is not None])
    np.testing.assert_array_equal(array.flatten().to_numpy().reshape(-1, fm.FLAT),
                                  fm.encode(present, encoding, spec.scale))
    assert spec.to_arrow([None, None]).value_lengths().to_pylist() == [0, 0]


@pytest.mark.parametrize("encoding", fm.ENCODINGS)
def test_encoding_into_a_column_buffer_equals_encoding_alone(encoding: str) -> None:
    """What columns._matrix does: each matrix written in place into its slice of the row
    group's buffer, NaN taxels included; the neighbours' slices stay untouched."""
    rng = np.random.default_rng(3)
    batch = rng.normal(0.0, 800.0, (3, *fm.SHAPE)).astype(np.float32)
    batch[1, 7, 9, 2] = np.nan
    dtype = fm.encode(batch[:1], encoding, 10).dtype
    column = np.full(3 * fm.FLAT, 99, dtype=dtype)
    fm.encode(batch[1], encoding, 10, out=column[fm.FLAT:2 * fm.FLAT])
    np.testing.assert_array_equal(column[fm.FLAT:2 * fm.FLAT], fm.encode(batch[1], encoding, 10)[0])
    assert (column[:fm.FLAT] == 99).all() and (column[2 * fm.FLAT:] == 99).all()


def test_a_row_group_written_a_matrix_row_at_a_time_reads_back_the_same(tmp_path) -> None:
    """matrices_by_row: the row sink hands pyarrow's parquet writer one chunk per row of a
    matrix column (cheaper levels); the file holds the same schema and values, in one row group."""
    import pyarrow.parquet as pq

    from egorec_ros.store.row_sink import matrices_by_row, parquet_options
    specs = [col.force_matrix("observation.gripper_left_force_matrix"), col.scalar("frame_index", "int64")]
    rng = np.random.default_rng(5)
    values = [rng.normal(0, 500, fm.SHAPE).astype(np.float32) if i != 2 else None for i in range(5)]
    table = pa.Table.from_arrays([specs[0].to_arrow(values), specs[1].to_arrow(list(range(5)))],
                                 schema=pa.schema([pa.field(c.name, c.type) for c in specs]))
    by_row = matrices_by_row(table, specs)
    assert by_row.column(0).num_chunks == 5 and by_row.column(1).num_chunks == 1
    assert by_row.schema == table.schema and by_row.equals(table)
    pq.write_table(by_row, tmp_path / "d.parquet", row_group_size=by_row.num_rows, **parquet_options(specs))
    back = pq.ParquetFile(tmp_path / "d.parquet")
    assert back.num_row_groups == 1 and back.read().equals(table)
