"""tf.data API breadth against real TensorFlow: the same cases (data_api_cases.py) run under
both — FixedLengthRecordDataset (plain, GZIP, and the DataLossError of a bad body), the
TFRecord file tensorlite's experimental.TFRecordWriter wrote (read by TF's reader),
sparse_batch, group_by_reducer, assert_cardinality's errors, get_single_element's errors,
from_list, index_table_from_dataset's OOV ids, SqlDataset, Optional, and
make_batched_features_dataset / parse_example_dataset over Example files TensorFlow wrote —
and must agree."""
import pytest

import tensorlite as tf
from tests.interop import data_api_cases

pytestmark = pytest.mark.interop

SIDE = __file__.replace("test_data_api_interop.py", "tf_data_api_side.py")


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    from tests.interop.conftest import run_tf  # noqa: PLC0415
    d = tmp_path_factory.mktemp("data_api")
    data_api_cases.make_inputs(d)
    records = tf.data.Dataset.from_tensor_slices([b"first", b"", b"\x00\xff third"])
    tf.data.experimental.TFRecordWriter(str(d / "written.tfrecord"), "GZIP").write(records)
    theirs = run_tf("cases", d, script=SIDE)
    return data_api_cases.cases(tf, str(d)), theirs


CASES = ["fixed", "fixed_gzip", "fixed_bad", "tfrecord_written", "counter", "sparse_batch",
         "sparse_batch_unknown", "sparse_batch_minus_one", "sparse_batch_too_big", "fixed_bad_gzip",
         "group_by_reducer", "assert_short", "assert_long",
         "assert_card", "single_empty", "single_many", "from_list", "index_table_oov", "sql",
         "sql_driver", "optional_empty_get", "shard_policies", "batched_features",
         "parse_example_dataset", "external_state_policies", "pad_to_cardinality",
         "dataset_initializer", "at", "at_out_of_range", "at_filter"]


@pytest.mark.parametrize("case", CASES)
def test_same_as_tensorflow(both, case):
    ours, theirs = both[0][case], both[1][case]
    if isinstance(theirs, dict) and "error" in theirs:
        assert isinstance(ours, dict) and ours.get("error") == theirs["error"], \
            f"{case}: TensorFlow raised {theirs}, tensorlite gave {ours}"
        return
    assert ours == theirs, f"{case}: tensorlite {ours}, TensorFlow {theirs}"


def test_error_messages_say_what_tensorflow_says(both):
    ours, theirs = both
    for case, phrase in [("fixed_bad", "has body length 10 bytes"),
                         ("fixed_bad_gzip", "has body length 10 bytes"),
                         ("sparse_batch_too_big", "that is larger than the row shape ([2])"),
                         ("assert_short", "contained only 3 elements"),
                         ("assert_long", "contained at least 6 elements"),
                         ("single_empty", "Dataset was empty"),
                         ("at_out_of_range", "Index out of range [0, 10):12"),
                         ("at_filter", "Random access is not implemented for dataset"),
                         ("single_many", "more than one element"),
                         ("sql_driver", "not supported by SqlDataset")]:
        assert phrase in theirs[case]["message"], (case, theirs[case])
        assert phrase in ours[case]["message"], (case, ours[case])
