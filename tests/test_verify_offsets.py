"""The facts start-offset scaling rests on, checked against real torch: an
accumulator started at an offset gives bit-identical results to a long run that
reached the offset, every offset is exactly representable in its dtype, and the
runs pass each dtype's limit (float64 at 2^53 and int32 at 2^31 included)."""
import pytest

torch = pytest.importorskip("torch", reason="the offsets are checked against real torch")

from precision_lint.verify.hooks import LIMITS, Recorder, start_offset  # noqa: E402

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


@pytest.mark.parametrize("dtype", (torch.float16, torch.bfloat16))
def test_a_start_offset_is_bit_identical_to_a_long_run(dtype):
    limit = LIMITS[dtype]
    counts = torch.randint(0, 40, (200,), generator=torch.Generator().manual_seed(1)).tolist()
    long_run = torch.zeros(1, dtype=dtype)
    for _ in range(limit - 8):  # one count at a time up to the offset: exact below the limit
        long_run += 1
    started = torch.zeros(1, dtype=dtype)
    started += limit - 8
    assert torch.equal(long_run, started)
    for count in counts:
        long_run += count
        started += count
        assert long_run.view(torch.int16).item() == started.view(torch.int16).item()


@pytest.mark.parametrize("dtype", FLOATS + (torch.int32,))
def test_every_offset_is_exact_in_its_dtype_and_passes_the_limit(dtype):
    limit = LIMITS[dtype]
    integer = not dtype.is_floating_point
    for run in ("below",) if integer else ("below", "high"):  # int32 has no high run: it wraps from below
        offset = start_offset(run, limit, integer)
        value = torch.zeros(1, dtype=dtype)
        value.add_(offset)
        assert int(value.to(torch.float64).item()) == offset
        value.add_(16 if not integer else 9)
        assert value.double().item() > limit or (integer and value.item() < 0)  # past the limit (int32 wraps)


def test_the_high_run_loses_small_counts_in_every_float_dtype():
    for dtype in FLOATS:
        recorder = Recorder("cpu", "high")
        accumulator = recorder.start(0, torch.zeros(1, dtype=dtype), None)
        for count in (1, 3, 5, 7):
            accumulator += count
            recorder.box(0, None).v += count
            recorder.trace(0, accumulator, None, 1, "add")
        summary = recorder.summary()
        assert summary["driven"] and summary["lost"], dtype
        assert summary["offset"] == 8 * LIMITS[dtype] - 64


def test_int32_starts_two_below_its_limit_so_adds_of_one_wrap():
    assert start_offset("below", 2**31 - 1, True) == 2**31 - 3
    assert start_offset("below", 2**24, False) == 2**24 - 8


def test_dtype_arguments_object_attributes_and_floating_data_in_the_replays_dtype():
    from precision_lint.verify.synth import Synthesizer

    synth = Synthesizer({}, [], "cpu", 0, "zero", None, torch.bfloat16)  # the model's floating dtype as bfloat16
    assert synth.make({"roles": ["dtype"]}, "dtype#0", 0) is torch.bfloat16
    assert synth.make({"roles": []}, "x#0", 0).dtype is torch.bfloat16
    # `config.dim` read as a value is the object's own, not torch.Tensor.dim
    config = synth.make({"roles": [], "attrs": {"dim": {"roles": ["size"]}, "theta": {"roles": []}}}, "config#0", 0)
    assert config.dim == 4 and not callable(config.dim)
    # ids hold integers; their specials too
    ids = synth.make({"roles": ["integer"], "specials": [-100, "nan"]}, "ids#0", 0)
    assert ids.dtype is torch.int64 and set(ids.tolist()) <= {0, 1, 2, -100}
