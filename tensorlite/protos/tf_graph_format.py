"""Facts of TensorFlow's graph format (GraphDef, FunctionDef) that are not facts of any op
tensorlite registers, kept in one place for the writers and readers of SavedModels and
summaries.

Why these are not registry declarations: the registry (framework/registry.py) describes
tensorlite's own ops, and each op declares there how TensorFlow spells it (`tf`,
`tf_import`, `tf_outputs`). The names below are of another kind:

- the structure of a FunctionDef that the runner handles itself, not an op: calls, variable
  reads and assignments (variables are resources here, not ops);
- the variable nodes of a TF1 graph (`VarHandleOp`, `VariableV2`), which tensorlite reads
  from the checkpoint instead of running;
- the TensorFlow ops that name a file, which the SavedModel security check must refuse
  unless the path is the model's own, whether tensorlite implements them or not (most it
  does not: `WriteFile`, `SaveV2`, `MatchingFiles`, ...).

Example:
    >>> file_inputs("ReadFile")
    ((0, 'read'),)
"""

# The call ops of a FunctionDef: attribute `f` names the library function they run.
CALL_OPS = ("StatefulPartitionedCall", "PartitionedCall")

# A resource variable's assignment ops, by the mode of tensorlite's AssignVariable node.
ASSIGN_OPS = {"set": "AssignVariableOp", "add": "AssignAddVariableOp",
              "sub": "AssignSubVariableOp"}

# Nodes of a FunctionDef that are its structure rather than computation: run by the
# function runner itself (saved_model/function_runner.py), never through an import rule.
STRUCTURAL_OPS = frozenset({"NoOp", "Identity", "IdentityN", "Const", "ReadVariableOp", *CALL_OPS,
                            *ASSIGN_OPS.values()})

# The nodes of a TF1 graph that hold a variable (its value comes from variables/).
VARIABLE_OPS = ("VarHandleOp", "VariableV2", "Variable")

# TensorFlow op -> (index of its path input, "read" or "write"): the ops that name a file or
# a file pattern by an input. An op listed here with no tensorlite import rule still fails
# at run time as unimplemented, but its path is checked at load all the same.
FILE_OPS = {
    "ReadFile": (0, "read"),
    "InitializeTableFromTextFile": (1, "read"),
    "InitializeTableFromTextFileV2": (1, "read"),
    "MatchingFiles": (0, "read"),
    "RestoreV2": (0, "read"),
    "Restore": (0, "read"),
    "RestoreSlice": (0, "read"),
    "LoadAndRemapMatrix": (0, "read"),
    "TextLineDataset": (0, "read"),
    "TFRecordDataset": (0, "read"),
    "FixedLengthRecordDataset": (0, "read"),
    "WriteFile": (0, "write"),
    "SaveV2": (0, "write"),
    "Save": (0, "write"),
    "SaveSlices": (0, "write"),
    "MergeV2Checkpoints": (0, "write"),
    "CreateSummaryFileWriter": (1, "write"),
}
# MergeV2Checkpoints also writes its destination_prefix (input 1)
_EXTRA_PATHS = {"MergeV2Checkpoints": ((1, "write"),)}


def file_inputs(op):
    """(input index, mode) of each path input of TensorFlow op `op` (empty if none)."""
    if op not in FILE_OPS:
        return ()
    return (FILE_OPS[op],) + _EXTRA_PATHS.get(op, ())


__all__ = ["ASSIGN_OPS", "CALL_OPS", "FILE_OPS", "STRUCTURAL_OPS", "VARIABLE_OPS",
           "file_inputs"]
