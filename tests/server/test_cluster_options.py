"""Where page checks may run (evaluator/verification/check_placement.py): loopback over plain TCP,
anything else only over TLS with Dask's TLS settings; the worker count's default and bounds; and
the rationals of the checks (evaluator/verification/exact.py) round like Python's."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from evaluator.verification import exact
from evaluator.verification.check_placement import (
    AUTO_MIN_PAGES,
    ClusterOptions,
    ClusterRefused,
    check_address,
    check_options,
)


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "127.0.0.1:8786", "tcp://localhost:8786",
                                     "tcp://[::1]:8786", "tcp://127.0.0.2:1"])
def test_loopback_is_joined_over_plain_tcp(address):
    check_address(address)


@pytest.mark.parametrize("address", ["tcp://10.0.0.7:8786", "tcp://scheduler.example:8786", "tcp://0.0.0.0:8786",
                                     "192.168.1.2:8786"])
def test_another_machine_over_plain_tcp_is_refused(address):
    with pytest.raises(ClusterRefused, match="plain TCP only to a loopback address"):
        check_address(address)


def test_tls_without_dask_tls_settings_is_refused_and_other_schemes_too():
    with pytest.raises(ClusterRefused, match="distributed.comm.tls.ca-file"):
        check_address("tls://10.0.0.7:8786")
    with pytest.raises(ClusterRefused, match="only tcp:// .* or tls://"):
        check_address("ucx://10.0.0.7:8786")


def test_tls_with_dask_tls_settings_is_accepted(tmp_path):
    import dask

    ca, cert, key = (tmp_path / name for name in ("ca.pem", "client.pem", "client.key"))
    for path in (ca, cert, key):
        path.write_text("-")
    with dask.config.set({"distributed.comm.tls.ca-file": str(ca), "distributed.comm.tls.client.cert": str(cert),
                          "distributed.comm.tls.client.key": str(key)}):
        check_address("tls://10.0.0.7:8786")


def test_worker_counts():
    assert ClusterOptions().local_workers(AUTO_MIN_PAGES - 1) == 0
    assert ClusterOptions().local_workers(AUTO_MIN_PAGES) >= 1
    assert ClusterOptions(workers=3).local_workers(1) == 3
    assert ClusterOptions(workers=0).local_workers(10**6) == 0
    with pytest.raises(ClusterRefused, match="--workers must be 0"):
        check_options(ClusterOptions(workers=-1))
    with pytest.raises(ClusterRefused, match="exclude each other"):
        check_options(ClusterOptions(workers=2, scheduler="tcp://127.0.0.1:8786"))


def test_the_checks_rationals_are_pythons_rationals():
    rng = random.Random(7)
    for _ in range(2000):
        n, d = rng.getrandbits(rng.randint(1, 180)) * rng.choice((1, -1)), rng.getrandbits(rng.randint(1, 180)) or 1
        q = exact.Rational(n, d)
        assert q == Fraction(n, d) and hash(q) == hash(Fraction(n, d))
        assert float(q) == float(Fraction(n, d))  # correctly rounded, ties to even
        assert exact.text(q) == f"{Fraction(n, d).numerator}/{Fraction(n, d).denominator}"
    for x in (0.1, 1 / 3, 2.0**-60, 1e300, -0.0):
        assert exact.rational(x) == Fraction(x)  # a float is the binary fraction it stores
    assert float(exact.Rational(2**53 + 1, 1)) == float(2**53)  # a tie rounds to even
    assert exact.decimal(0.05) == Fraction(1, 20)
    assert exact.parse("-6/4", "x") == Fraction(-3, 2)
    for bad in ("1/0", "1.5/2", "3", None, "a/b"):
        with pytest.raises(ValueError, match="is not an exact rational"):
            exact.parse(bad, "x")
