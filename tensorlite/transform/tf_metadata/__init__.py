"""tf.Transform's dataset metadata: `dataset_metadata.DatasetMetadata` and `schema_utils`."""
