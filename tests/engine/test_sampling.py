"""SamplingParams: validation and the stop set every engine uses."""
import pytest

from hymt.engine.sampling import SamplingParams
from hymt.errors import InvalidInputError


def test_the_stop_set_is_the_request_ids_then_the_engine_ids():
    params = SamplingParams(stop_token_ids=(7, 3))
    assert params.effective_stop_ids((3, 9)) == (7, 3, 9)
    assert SamplingParams().effective_stop_ids([5]) == (5,)
    assert params.replace(ignore_eos=True).effective_stop_ids((3, 9)) == ()  # forced lengths


@pytest.mark.parametrize("field,value", [("temperature", -1.0), ("top_k", -2), ("top_p", 0.0),
                                         ("repetition_penalty", 0.0), ("max_tokens", 0)])
def test_bad_values_name_their_field(field, value):
    with pytest.raises(InvalidInputError) as e:
        SamplingParams(**{field: value})
    assert e.value.field == field


def test_greedy_and_merged_stop_ids():
    assert SamplingParams().greedy and not SamplingParams(temperature=0.7).greedy
    assert SamplingParams(stop_token_ids=(1, 2)).with_stop_ids([2, 3]).stop_token_ids == (1, 2, 3)
