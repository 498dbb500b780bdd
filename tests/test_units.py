"""Unit parsing: exact conversions to picoseconds, bit/s and bytes, and clear rejections."""

import pytest

from fabricsim.units import format_duration, format_rate, format_size, parse_duration_ps, parse_rate_bps, parse_size_bytes


@pytest.mark.parametrize("text, ps", [
    ("5ms", 5_000_000_000), ("1.5us", 1_500_000), ("2 s", 2 * 10**12), ("100ns", 100_000), ("10ps", 10),
    (0.001, 1_000_000_000), (2, 2 * 10**12), ("1e-6s", 1_000_000), ("0.1", 100_000_000_000),
])
def test_durations_are_exact_picoseconds(text, ps):
    assert parse_duration_ps(text) == ps


@pytest.mark.parametrize("text, bps", [
    ("100Gbps", 100 * 10**9), ("30Mbps", 30_000_000), ("1.5 Gb/s", 1_500_000_000), ("10kbps", 10_000),
    ("800bps", 800), (1e9, 10**9), ("61.803399Mbps", 61_803_399),
])
def test_rates(text, bps):
    assert parse_rate_bps(text) == bps


@pytest.mark.parametrize("text, n", [
    ("10MiB", 10 * 2**20), ("1KiB", 1024), ("1.5kB", 1500), ("64B", 64), ("1 GiB", 2**30), (1024, 1024), ("2MB", 2_000_000),
])
def test_sizes(text, n):
    assert parse_size_bytes(text) == n


@pytest.mark.parametrize("parse, bad, msg", [
    (parse_duration_ps, "-5ms", "negative"), (parse_duration_ps, "5 fortnights", "unknown duration unit"),
    (parse_duration_ps, float("nan"), "finite"), (parse_duration_ps, True, "boolean"), (parse_duration_ps, "1e8s", "limit"),
    (parse_rate_bps, "1Gbit", "unknown rate unit"), (parse_rate_bps, [1], "expected a rate"),
    (parse_size_bytes, "abc", "cannot read"), (parse_size_bytes, -1, "negative"),
])
def test_rejections_are_explicit(parse, bad, msg):
    with pytest.raises(ValueError, match=msg):
        parse(bad)


def test_formatting():
    assert format_duration(1_500_000_000) == "1.5 ms"
    assert format_rate(95.3e6) == "95.3 Mb/s"
    assert format_size(10 * 2**20) == "10 MiB"


@pytest.mark.parametrize("parse, bad, msg", [
    (parse_rate_bps, "1GBps", "rates are in bits"), (parse_rate_bps, "10 MB/s", "rates are in bits"),
    (parse_size_bytes, "8Mb", "sizes are in bytes"), (parse_size_bytes, "1kb", "sizes are in bytes"),
])
def test_bits_and_bytes_are_not_confused(parse, bad, msg):
    with pytest.raises(ValueError, match=msg):
        parse(bad)


def test_micro_sign_and_byte_words():
    assert parse_duration_ps("5\u00b5s") == parse_duration_ps("5\u03bcs") == parse_duration_ps("5us") == 5_000_000
    assert parse_size_bytes("3 bytes") == 3
    assert parse_size_bytes("2mib") == parse_size_bytes("2MiB") == 2 * 2**20
