"""`dataset_metadata.DatasetMetadata`: the schema of a dataset a tf.Transform pipeline reads
or writes."""
from tensorlite.transform.tf_metadata import schema_utils


class DatasetMetadata:
    """A TensorFlow Metadata Schema with its feature spec."""

    def __init__(self, schema):
        self._schema = schema

    @classmethod
    def from_feature_spec(cls, feature_spec, domains=None):
        """The metadata of a feature spec."""
        return cls(schema_utils.schema_from_feature_spec(feature_spec, domains))

    @property
    def schema(self):
        return self._schema

    @property
    def feature_spec(self):
        return schema_utils.schema_as_feature_spec(self._schema)

    def __eq__(self, other):
        return isinstance(other, DatasetMetadata) and self._schema == other._schema

    def __repr__(self):
        return f"DatasetMetadata({sorted(self.feature_spec)})"
