"""Scheme names, device support and the errors a bad value gets."""
from __future__ import annotations

from unittest import mock

import pytest

from hymt.engine.config import QUANTIZATION_CHOICES
from hymt.engine.quant.schemes import SCHEMES, effective_group_size, resolve_scheme, supported_schemes
from hymt.errors import InvalidInputError


def test_cpu_runs_every_scheme_as_a_reference():
    assert supported_schemes("cpu") == ("int8", "int4", "fp8")
    assert resolve_scheme("INT4", "cpu").bits == 4


def test_the_config_offers_exactly_the_schemes():
    assert QUANTIZATION_CHOICES == (None, *SCHEMES)  # config.py cannot import the torch-side table


def test_unknown_scheme_lists_what_this_device_supports():
    with pytest.raises(InvalidInputError, match=r"'int3'.*valid on cpu: None, int8, int4, fp8") as e:
        resolve_scheme("int3", "cpu")
    assert e.value.field == "quantization"


def test_fp8_on_a_pre_hopper_gpu_names_the_capability_and_the_alternatives():
    with mock.patch("torch.cuda.get_device_capability", return_value=(8, 0)), \
         mock.patch("torch.cuda.current_device", return_value=0):
        assert supported_schemes("cuda") == ("int8", "int4")
        with pytest.raises(InvalidInputError, match=r"compute capability 9\.0\+.*valid on cuda: None, int8, int4$"):
            resolve_scheme("fp8", "cuda")


def test_group_size_must_be_a_power_of_two():
    assert resolve_scheme("int4", "cpu", group_size=64).group_size == 64
    with pytest.raises(InvalidInputError, match="power of two"):
        resolve_scheme("int4", "cpu", group_size=48)


@pytest.mark.parametrize("width, group", [(2048, 128), (14336, 128), (96, 32), (64, 64), (24, 24)])
def test_effective_group_size(width, group):
    assert effective_group_size(width, 128) == group
